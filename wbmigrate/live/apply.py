"""Write a migration to W&B, a batch of objects at a time, (rollback: `live.restore`).

Each object was planned once, when it was read (`plan_write`): the write reuses that rewrite,
and goes ahead only if W&B still holds exactly
the bytes it was made from. For each batch (as many objects as are written at once, `--jobs`): back
up the originals (their files are written while the batch before waits; the journal names them just
before the read), read the batch again in one request (views by id under GraphQL aliases, the
automations by name), make the backup durable while that read is out, and send together the
writes of the objects still exactly as planned. W&B's `upsertView` and `updateFilterTrigger` take no
precondition, so that read is the last moment an edit can be seen before it would be overwritten. It
goes out once the writes of the batch two before are answered, and the writes leave once it and the
batch before's writes are answered: between an object's last read and its write lies at most the
batch before's writes, never more than `--jobs` writes are in flight, and a read costs the run no
turn of its own. Then each object is read back: if someone else saved it meanwhile, it is a
conflict, and their version is kept in the backup beside the original. The mutation is asked back
only the time of the save (`updatedAt`): its answer cannot show a save made after it, so the
read-back stays, and it is what shows the bytes W&B stored; it rides on the read of the batch after
next (the last two batches' are one request of their own). `--jobs 1` is batches of one, in the
same pipeline, as `--jobs 2` is batches of two. Batches are never larger
than `--jobs`: the writes of a batch all leave together, so a larger batch would write more at once
than asked. One failing object never stops the others; a Ctrl-C starts no new batch but lets those
in flight finish (the one being written, and the next once backed up), read-backs included. The
batches are `live.batches`; what a write came to is `live.outcomes`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wbmigrate.engine.model import Options
from wbmigrate.errors import WbmigrateError, bug
from wbmigrate.live.objects import LiveObject
from wbmigrate.live.outcomes import Rewritten
from wbmigrate.plan import Planned
from wbmigrate.rewrite import NewText, rewrite_of

if TYPE_CHECKING:
    from wbmigrate.mapping import Migration


# --- planning, once ----------------------------------------------------------------------------


def plan_write(
    obj: LiveObject, migration: Migration, options: Options, base_url: str = ""
) -> tuple[Planned, Rewritten | None]:
    """Plan one object as `apply` writes it: the plan (for the summary) and, when one could be
    made, its rewrite: the changes, and the edits the text to send is spliced from when the
    object's turn to be written comes (`Rewritten.text`). The data-loss guard checks those
    exact bytes against the edits then (`live.outcomes.to_send`): the bytes are only sent if
    W&B still holds what they were made from. `base_url`: the API host, for the object's link."""
    source = obj.source(base_url)
    if source.error is not None:
        return Planned(source, error=source.error), None
    try:
        result = rewrite_of(obj.text, migration, kind=obj.kind, name=obj.title, options=options)
    except WbmigrateError as exc:
        return Planned(source, error=str(exc)), None
    except Exception as exc:  # a bug: said for this object alone, as `plan_one` does
        return Planned(source, error=bug(exc)), None
    if not result.changed:
        return Planned(source, result), Rewritten(None)
    text = NewText(obj.text, result.edits)
    return Planned(source, result), Rewritten(text, result.changes, result.edits)
