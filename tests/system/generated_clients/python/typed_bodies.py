"""The back office's bodies as the generated Python client types them, read by `mypy --strict`
(run.sh): a create without a required key, or None where the server accepts no null, is a
type error. Each such line carries its `# type: ignore[...]`, and mypy runs with
`--warn-unused-ignores`, so a line the checker does not refuse fails the run; the lines
without one must type-check. Nothing here runs."""

from admin_client.models import OccasionCreateBody, OfferChangeBody, OfferCreateBody

# pointAmount is required.
OfferCreateBody(amount="6.25")  # type: ignore[call-arg]
# active is true or false, never null.
OfferCreateBody(point_amount="40", amount="6.25", active=None)  # type: ignore[arg-type]
# A change's amount is a price, never null.
OfferChangeBody(amount=None)  # type: ignore[arg-type]
# occasionEn is required.
OccasionCreateBody(occasion_ar=None)  # type: ignore[call-arg]
# Where null is accepted, it type-checks.
OfferCreateBody(point_amount="40", amount="6.25", purchased_point_amount=None, sequence=None)
OfferChangeBody(sequence=None, purchased_point_amount=None)
