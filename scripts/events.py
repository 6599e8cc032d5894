"""The points events as a consumer reads them (docs/decisions.md, "Events"): every event of
the stream LOYALTY_EVENTS from the first, one CloudEvent (JSON) per line, then it waits for
more until Ctrl-C. `make events` runs it against the NATS server `make run` started.

The guarantee it relies on: at least once, in commit order per client (the event's
`subject`). A consumer dedupes by the CloudEvent's `id`, which is also the message's
`Nats-Msg-Id`; this one keeps the ids it has seen in memory.
"""

import asyncio
import json
import os

import nats
from nats.js.api import DeliverPolicy

STREAM = "LOYALTY_EVENTS"


async def main() -> None:
    connection = await nats.connect(os.environ.get("NATS_URL", "nats://127.0.0.1:4223"))
    jetstream = connection.jetstream()
    seen: set[str] = set()
    # An ordered consumer of its own, from the stream's first message: nothing to create or
    # clean up on the server.
    subscription = await jetstream.subscribe(
        "loyalty.>", stream=STREAM, ordered_consumer=True, deliver_policy=DeliverPolicy.ALL
    )
    async for message in subscription.messages:
        event = json.loads(message.data)
        if event["id"] in seen:
            continue
        seen.add(event["id"])
        print(json.dumps(event, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    try:
        asyncio.run(main())
    except KeyboardInterrupt:
        pass
