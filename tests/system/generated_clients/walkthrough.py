"""The README walkthrough (tests/system/walkthrough.rs) through the clients generated from the
auth and order services' documents: every call goes through a generated function and every
answer comes back as a generated model (the balance, the offers and the orders included),
never as an untyped map. Run by run.sh."""

import os

import httpx

from auth_client import Client as AuthClient
from auth_client.api.login import reset_otp, verify_otp
from auth_client.api.tokens import exchange_token
from auth_client.models import ExchangeBody, Sent, WrappedLogin, WrappedToken
from order_client import AuthenticatedClient, Client as OrderClient
from order_client.api.relayed_point_routes import (
    relay_get_point_offers,
    relay_get_point_orders_correlation_id,
    relay_get_points,
    relay_post_point_orders,
    relay_post_point_orders_correlation_id_pay_card,
)
from order_client.api.services import children
from order_client.api.stores import nearest
from order_client.models import (
    Balance,
    CardBody,
    ListedServiceItem,
    NearestStore,
    Offer,
    Order,
    OrderBody,
    PaymentStarted,
)

SARA_PHONE = "+966500000001"
OFFER_100 = "64b7f0c2a1b2c3d4e5f60718"
OFFER_250 = "64b7f0c2a1b2c3d4e5f60719"


def typed(value, model):
    assert isinstance(value, model), f"expected a {model.__name__}, got {value!r}"
    return value


auth = AuthClient(base_url=os.environ["AUTH_URL"], raise_on_unexpected_status=True)

# 1. Log in with the test code (Sara's account is in test mode: no SMS, code 1234).
sent = typed(reset_otp.sync(client=auth, contact_phone=SARA_PHONE), Sent)
assert sent.status is True
login = typed(verify_otp.sync(client=auth, contact_phone=SARA_PHONE, code="1234"), WrappedLogin)
assert login.data.profile.client_id == 1001, login
primary = login.data.access_token

# 2. Exchange the primary token for a legacy token, which the /api/v2 routes take.
exchanged = typed(
    exchange_token.sync(client=auth, body=ExchangeBody(token=primary, target_platform="legacy")),
    WrappedToken,
)
order = AuthenticatedClient(
    base_url=os.environ["ORDER_URL"], token=exchanged.data.token, raise_on_unexpected_status=True
)

# 3. The balance, through the order service's relay.
balance = typed(relay_get_points.sync(client=order), Balance)
assert (balance.id, balance.points) == ("1001", "630.5"), balance

# 4. An offer for a friend, paid with points: Sara pays 120, Omar gets 100.
offers = relay_get_point_offers.sync(client=order)
assert all(isinstance(offer, Offer) for offer in offers), offers
assert OFFER_100 in [offer.id for offer in offers], offers
gift = typed(
    relay_post_point_orders.sync(
        client=order,
        body=OrderBody(point_offer_id=OFFER_100, to_client_id=1002, payment_type="point"),
        idempotency_key="generated-gift-1",
    ),
    Order,
)
assert (gift.status, gift.order_type) == ("successful", "transfer"), gift
assert typed(relay_get_points.sync(client=order), Balance).points == "510.5"

# 5. An offer by card: the sandbox's 3-D Secure page (not one of the services), then Approve.
by_card = typed(
    relay_post_point_orders.sync(
        client=order,
        body=OrderBody(point_offer_id=OFFER_250, to_client_id=1001, payment_type="checkout"),
        idempotency_key="generated-card-1",
    ),
    Order,
)
started = typed(
    relay_post_point_orders_correlation_id_pay_card.sync(
        correlation_id=str(by_card.correlation_id),
        client=order,
        body=CardBody(id="card_visa_4242", cvv="123"),
    ),
    PaymentStarted,
)
assert started.status == "pending", started
assert started.redirect_url.startswith(os.environ["SANDBOX_URL"] + "/3ds/"), started
assert httpx.post(started.redirect_url + "/approve").status_code == 200
paid = typed(
    relay_get_point_orders_correlation_id.sync(
        correlation_id=str(by_card.correlation_id), client=order
    ),
    Order,
)
assert (paid.status, paid.payment_status) == ("successful", "CAPTURED"), paid
assert typed(relay_get_points.sync(client=order), Balance).points == "760.5"

# 6. A parent service's children, as the app opens them.
catalog = OrderClient(base_url=os.environ["ORDER_URL"], raise_on_unexpected_status=True)
listed = typed(children.sync(id="1", client=catalog), ListedServiceItem)
assert [child.id for child in listed.data] == [4, 5, 6], listed
assert listed.data[0].title_translated == "Burgers"

# 7. The nearest branch of the Riyadh burger brand.
branch = typed(nearest.sync("77", client=catalog, latitude=24.7136, longitude=46.6753), NearestStore)
assert branch.store_id == 10, branch

print("walkthrough through the generated clients: ok")
