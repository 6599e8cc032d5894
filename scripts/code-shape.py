#!/usr/bin/env python3
"""The code's shape, measured: where each fixed message of the API documents is written,
how much text the route attributes hold, and the lines and files that grew too long.

    scripts/code-shape.py            # report, exit 1 when a limit below is passed
    scripts/code-shape.py --report   # report only

Limits (docs/CONVENTIONS.md): each message below is written once in the non-test sources;
the `#[utoipa::path(...)]` attributes hold at most a third of the text they held
(ATTRIBUTE_BUDGETS) and 13 000 bytes in all (WORKSPACE_BUDGET); no source line passes 120
columns; no non-test source file passes 400 lines. Run from `make test` (scripts/test.sh).

Non-test sources are the `.rs` files under `crates/*/src` and `services/*/src`, less test
modules: files named `tests.rs` or under a `tests/` or `testing/` folder, `testing.rs`, and
everything from a `#[cfg(test)]` line to the end of a file (our test modules come last).
"""

import pathlib
import re
import sys

REPO = pathlib.Path(__file__).resolve().parent.parent

# Every message the API documents (docs/spec/) fix word for word; a template's variable part
# (`<id>`, `<error text>`) is cut, and what is counted is the fixed text before it.
SPEC_MESSAGES = [
    # account-session-points.md, Errors (envelope B) and the point routes
    "Invalid point-order body",
    "a point order cannot be paid with points to yourself",
    "to_client_id <id> does not exist",
    "point occasion <id> not found or inactive",
    "point offer <id> cannot be paid with points: it has no purchased_point_amount",
    "client <id> does not exist",
    "Missing or invalid authorization header",
    "Invalid or expired token",
    "auth service unreachable: <error text>",
    "auth response missing numeric client id",
    "paying a point order with points is disabled",
    "card payment for point orders is disabled",
    "point offer <id> not found or inactive",
    "point order not found",
    "insufficient points for client <id>",
    "AUTH_SERVICE_URL not set",
    "Internal server error",
    "Point service unavailable: <error text>",
    "Point service did not respond in time; the request outcome is unknown",
    "point offer id must be a 24-character hex ObjectId",
    "client_id does not match the authenticated client",
    # account-session-points.md, the auth service (envelope A) and the order service (C)
    "Unauthorization",
    "push_enabled is required",
    "first_name is invalid",
    "last_name is invalid",
    "email_address is invalid",
    "birth_date is invalid",
    "contact_phone cannot be changed",
    "Last Name cannot be blank.",
    "The code not exist",
    # service-hierarchy-store-discovery.md, the operator service
    "Child services updated successfully",
    "Service is not found",
    "A service cannot be assigned as a child of itself",
    "At least one of assignServiceIds or unassignServiceIds must be provided",
    "assignServiceIds and unassignServiceIds must not contain the same service id",
    "Only a service with hierarchy_role = parent can have child services",
    "Some services cannot be assigned: they do not exist, are not child services, or already "
    "belong to another parent: <comma-separated ids>",
    "each value in hierarchy_role must be a valid enum value",
]

# A third of what the route attributes held on 2026-11-27, before the route prose moved into
# doc comments: 38 850 bytes in the four services' 44 (the issue's "38.8 KB", the relayed
# routes' now in crates/relayed-routes) and 5 365 in the sandbox's. The shared operational
# routes (crates/server, 3 attributes) hold one short line per answer and have no budget.
# The four services' budget is per attribute (a third of those 44's mean, 294 bytes), so that
# a new route brings its share and no more; the sandbox's routes are as they were.
ATTRIBUTE_BUDGETS = {
    "the four services": (
        ("services/auth-service", "services/operator-service", "services/order-service",
         "services/point-service", "crates/relayed-routes"),
        lambda attributes: attributes * (38_850 // (44 * 3)),
    ),
    "the payment sandbox": (("services/payment-sandbox",), lambda _: 5_365 // 3),
}
# The whole workspace's route attributes (issue 42: "at most 13 KB"): an operation's name,
# tag, token and shared answers are said where its routes are listed, a success answer's
# description by its body's type, so an attribute holds what is its route's alone.
WORKSPACE_BUDGET = 13_000
MAX_COLUMNS = 120
MAX_FILE_LINES = 400


def sources():
    """(path, non-test text) of every non-test source file."""
    roots = [p for p in (REPO / "crates").glob("*/src") if p.parent.name != "testkit"] + list((REPO / "services").glob("*/src"))
    for root in roots:
        for path in sorted(root.rglob("*.rs")):
            parts = path.relative_to(root).parts
            if path.name in ("tests.rs", "testing.rs") or "tests" in parts[:-1] or "testing" in parts[:-1]:
                continue
            # A string literal continued on the next line (`\` at the end) reads as one.
            text = re.sub(r"\\\n\s*", "", path.read_text())
            cut = re.search(r"^#\[cfg\(test\)\]", text, re.M)
            yield path, text[: cut.start()] if cut else text


def fixed_part(message):
    return message.split("<", 1)[0].rstrip()


def pattern(message):
    """A message as it may be written in a source: its variable parts (`<id>`) as a format
    placeholder (`{}`, `{id}`), a document's `<id>`, or nothing (a prefix the code completes)."""
    parts = re.split(r"<[^>]*>", message)
    hole = r"(?:\{[^}]*\}|<[^>]*>|)"
    return re.compile(hole.join(re.escape(part) for part in parts))


def attribute_texts(text):
    """The text of each `#[utoipa::path(...)]` attribute: from its start to its closing `)]`,
    counting parentheses outside string literals."""
    for start in (m.start() for m in re.finditer(r"#\[utoipa::path\(", text)):
        depth, i, in_string = 0, start + 2, False
        while i < len(text):
            c = text[i]
            if in_string:
                if c == "\\":
                    i += 1
                elif c == '"':
                    in_string = False
            elif c == '"':
                in_string = True
            elif c == "(":
                depth += 1
            elif c == ")":
                depth -= 1
                if depth == 0:
                    yield text[start : i + 2]
                    break
            i += 1


def main():
    report_only = "--report" in sys.argv
    files = list(sources())
    failures = []

    written = {}
    for message in SPEC_MESSAGES:
        written[message] = [
            f"{path.relative_to(REPO)}:{text[: m.start()].count(chr(10)) + 1}"
            for path, text in files
            for m in pattern(message).finditer(text)
        ]
    twice = {m: where for m, where in written.items() if len(where) > 1}
    nowhere = [m for m, where in written.items() if not where]
    print(
        f"spec messages: {len(SPEC_MESSAGES)}; written more than once: {len(twice)}; "
        f"found nowhere: {len(nowhere)}"
    )
    for message in nowhere:
        print(f"  0x {message!r}")
    if nowhere:
        failures.append(f"{len(nowhere)} spec messages are found nowhere (written in pieces?)")
    for message, where in twice.items():
        print(f"  {len(where)}x {message!r}: {', '.join(where)}")
    if twice:
        failures.append(f"{len(twice)} spec messages are written more than once")

    attributes = [(path, a) for path, text in files for a in attribute_texts(text)]
    size = sum(len(a.encode()) for _, a in attributes)
    print(f"#[utoipa::path] attributes: {len(attributes)}, {size} bytes")
    by_service = {}
    count_by_service = {}
    for path, a in attributes:
        key = "/".join(path.relative_to(REPO).parts[:2])
        by_service[key] = by_service.get(key, 0) + len(a.encode())
        count_by_service[key] = count_by_service.get(key, 0) + 1
    for key, bytes_ in sorted(by_service.items()):
        print(f"  {key}: {bytes_}")
    if size > WORKSPACE_BUDGET:
        failures.append(f"the route attributes hold {size} bytes, over {WORKSPACE_BUDGET}")
    for name, (places, budget_for) in ATTRIBUTE_BUDGETS.items():
        held = sum(bytes_ for key, bytes_ in by_service.items() if key in places)
        budget = budget_for(sum(n for key, n in count_by_service.items() if key in places))
        print(f"  {name}: {held} bytes (budget {budget})")
        if held > budget:
            failures.append(f"the route attributes of {name} hold {held} bytes, over {budget}")

    long_lines = []
    for root in ("crates", "services", "tests", "fuzz", "bench"):
        for path in sorted((REPO / root).rglob("*.rs")):
            if "target" in path.parts:
                continue
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if len(line) > MAX_COLUMNS:
                    long_lines.append(f"{path.relative_to(REPO)}:{number} ({len(line)})")
    print(f"lines over {MAX_COLUMNS} columns: {len(long_lines)}")
    for line in long_lines:
        print(f"  {line}")
    if long_lines:
        failures.append(f"{len(long_lines)} lines over {MAX_COLUMNS} columns")

    long_files = [
        f"{path.relative_to(REPO)} ({text.count(chr(10))})"
        for path, text in files
        if text.count("\n") > MAX_FILE_LINES
    ]
    print(f"non-test files over {MAX_FILE_LINES} lines: {len(long_files)}")
    for entry in long_files:
        print(f"  {entry}")
    if long_files:
        failures.append(f"{len(long_files)} files over {MAX_FILE_LINES} lines")

    for failure in failures:
        print(f"code-shape: {failure}", file=sys.stderr)
    return 0 if report_only or not failures else 1


if __name__ == "__main__":
    sys.exit(main())
