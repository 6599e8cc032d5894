"""The app's journey and the admin panel's children steps through two clients generated from
the app and admin documents (run.sh makes `app_client` and `admin_client`).

Every call goes through a generated function, found by the contract's tag and operation id,
and every answer must be the generated model the contract promises. The typing is checked at
run time, so that a document an app team could not use as it is fails here:
  - an answer is an instance of the expected generated model class (imported by name);
  - every field is read through `field`, which asserts that the model declares it required
    (an attrs field with no default; a generated optional field is `Unset` by default) and
    the value's type: closed sets are the generated Enum classes, integers `int`, nullable
    fields `T | None` (in the declaration too);
  - integer path ids are declared `int` by the generated function.
A typing defect is recorded and the journey goes on with what the generator made (the module
of the same method and path, the class it used), so that one run lists every defect; a wrong
status or value ends its step. Exit 1 when anything failed.

Model names: the closed sets' Enum names are the contract's; the answers' are the documents'
schema names (`Balance`, `Order`, `PaymentSession`, `PaymentServiceError`, `ListPageCandidate`,
...); inline rows (a list's items) are only required to be generated models.

Reads AUTH_URL, ORDER_URL, OPERATOR_URL, SANDBOX_URL (the running services) and
OPERATOR_TOKEN (an operator token with the admin role). Expects a freshly seeded stack
(deploy/fixtures/demo.json): the gift code and the orders change the data.
"""

import datetime
import enum
import importlib
import inspect
import os
import pkgutil
import re
import sys
import time
import traceback
import uuid
from types import SimpleNamespace

import admin_client
import app_client
import attrs
import httpx
from openapi_python_client.strings import PythonIdentifier, snake_case

SARA_PHONE = "+966500000001"
SARA = 1001
OMAR = 1002
POINT_OFFER = "64b7f0c2a1b2c3d4e5f60718"  # 100 points for 120, or 15.00 SAR
CARD_OFFER = "64b7f0c2a1b2c3d4e5f60719"  # 250 points for 35.00 SAR
PARENT, CHILDREN, UNASSIGNED_CHILD = 1, [4, 5, 6], 8
BURGER_BRAND, RIYADH = 77, (24.7136, 46.6753)
TIMEOUT = httpx.Timeout(30.0)  # above the relay's 20 s wait on the pay routes

# --- what failed ------------------------------------------------------------------------------

# The kinds of document defect, as the report groups them.
UNTYPED = "untyped answer"
OPTIONAL = "optional key that is always there"
CLOSED_SET = "free string for a closed set"
STRING_ID = "integer id typed string"
OPERATION = "operation not where the contract puts it"
OTHER = "other"

problems = {}  # (kind, message) -> the first step that met it: one line per defect
current_step = "setup"


def problem(kind, message):
    problems.setdefault((kind, message), current_step)


class Broken(Exception):
    """A wrong status or value: the step cannot go on."""


# --- reading the generated clients ------------------------------------------------------------

NUMBER = "a JSON number"  # point amounts: int or float (never bool)


@attrs.define(frozen=True)
class Missing:
    """A generated class the document should have made and did not."""

    name: str


def model(package, name):
    """The generated model `name` of `package`, or Missing (recorded)."""
    found = getattr(importlib.import_module(f"{package.__name__}.models"), name, None)
    if found is None:
        problem(CLOSED_SET if name in ENUMS else UNTYPED, f"{package.__name__} has no model {name}")
        return Missing(name)
    return found


ENUMS = {"OrderStatus", "PaymentStatus", "PaymentType", "OrderType", "HierarchyRole",
         "ServiceStatus", "TargetPlatform", "LedgerKind"}


def member(package, enum_name, value):
    """`value` of the generated Enum `enum_name`, or the plain text when there is none
    (recorded)."""
    cls = model(package, enum_name)
    return value if isinstance(cls, Missing) else cls(value)


_routes = {}


def operation(package, tag, operation_id, method, path):
    """The generated module `<package>.api.<tag>.<operation id>`. When it is missing (recorded),
    the module the generator made for the same method and path, so the journey goes on."""
    name = f"{package.__name__}.api.{snake_case(tag)}.{snake_case(operation_id)}"
    try:
        return importlib.import_module(name)
    except ImportError:
        problem(OPERATION, f"no {name}: {method} {path} is [{tag}] {operation_id}")
    if package not in _routes:
        _routes[package] = {}
        api = importlib.import_module(f"{package.__name__}.api")
        for info in pkgutil.walk_packages(api.__path__, f"{api.__name__}."):
            module = importlib.import_module(info.name)
            found = re.search(r'"method": "(\w+)",\s*"url": "([^"]+)"', inspect.getsource(module))
            if found:
                url = re.sub(r"\{[^}]*\}", "{}", found[2])
                _routes[package][(found[1].upper(), url)] = module
    module = _routes[package].get((method, re.sub(r"\{[^}]*\}", "{}", path)))
    if module is None:
        raise Broken(f"{package.__name__} has no operation for {method} {path}")
    return module


def integer_path_ids(op, *names):
    """The contract's integer path ids are `int` parameters of the generated function."""
    parameters = inspect.signature(op.sync_detailed).parameters
    for name in names:
        annotation = parameters[name].annotation
        if annotation not in (int, "int"):
            shown = getattr(annotation, "__name__", annotation)
            problem(STRING_ID, f"{op.__name__}: path id `{name}` is {shown}, not int")


def body_class(op):
    """The request body's generated model, as the generated function declares it."""
    return inspect.signature(op.sync_detailed).parameters["body"].annotation


def body_field_is_enum(body, key, enum_name):
    """A body field the contract gives a closed set is declared as the generated Enum."""
    declared = attrs.fields_dict(body)[PythonIdentifier(key, prefix="field")].type
    if enum_name not in _annotation_words(declared):
        problem(CLOSED_SET, f"{body.__name__}.{key} is {declared}, not {enum_name}")


def answer(response, expected, status=200):
    """The parsed answer: `status`, and an instance of the generated model `expected`."""
    if response.status_code != status:
        raise Broken(f"answered {response.status_code}, not {status}: {response.content[:300]!r}")
    is_model(response.parsed, expected, f"the {status} answer")
    return response.parsed


def listed(response, expected):
    """A bare array answer: a list of instances of `expected`."""
    if response.status_code != 200:
        raise Broken(f"answered {response.status_code}: {response.content[:300]!r}")
    rows = response.parsed
    if not isinstance(rows, list):
        raise Broken(f"an array answer is {type(rows).__name__}")
    for row in rows:
        is_model(row, expected, "an item")
    return rows


def _annotation_words(declared):
    return set(re.split(r"[\s|\[\],.]+", str(declared)))


def _is(value, kind):
    if kind is None:
        return value is None
    if kind in (int, NUMBER) and isinstance(value, bool):
        return False
    if kind is NUMBER:
        return isinstance(value, (int, float))
    return isinstance(kind, type) and isinstance(value, kind)


def field(obj, key, *kinds, optional=False):
    """`obj`'s field `key` (the JSON key). Unless `optional`, the model must declare it required
    (the answer always carries it); its value must be one of `kinds` (None among them: the
    field is nullable, and declared so)."""
    cls = type(obj)
    where = f"{cls.__name__}.{key}"
    declared = attrs.fields_dict(cls).get(PythonIdentifier(key, prefix="field"))
    if declared is None or declared.name == "additional_properties":
        problem(UNTYPED, f"{where} is not a declared field")
        if key not in getattr(obj, "additional_properties", {}):
            raise Broken(f"{where} is absent")
        value = obj.additional_properties[key]
    else:
        value = getattr(obj, declared.name)
        if not optional and declared.default is not attrs.NOTHING:
            problem(OPTIONAL, f"{where} is optional ({declared.type}) but always there")
        if (None in kinds) != ("None" in _annotation_words(declared.type)):
            problem(OTHER, f"{where} is declared {declared.type}: nullable is {None in kinds}")
        if type(value).__name__ == "Unset":  # each client has its own Unset class
            if optional:
                return None
            raise Broken(f"{where} is absent")
    if not any(_is(value, kind) for kind in kinds):
        wanted = " | ".join(getattr(k, "name", None) or getattr(k, "__name__", str(k))
                            for k in kinds)
        kind = CLOSED_SET if any(_is_enum(kind) for kind in kinds) else OTHER
        problem(kind, f"{where} is a {type(value).__name__}, not {wanted}")
    return value


def _is_enum(kind):
    if isinstance(kind, Missing):
        return kind.name in ENUMS
    return isinstance(kind, type) and issubclass(kind, enum.Enum)


def is_model(value, expected, what):
    """`value` (`what`) is an instance of the generated model `expected` (recorded when not) and
    a generated model at all (else the step cannot read it)."""
    if not isinstance(expected, Missing) and not isinstance(value, expected):
        problem(UNTYPED, f"{what} is {type(value).__name__}, not {expected.__name__}")
    if not attrs.has(type(value)):
        raise Broken(f"{what} is not a generated model: {value!r:.300}")


def poll(read, done, seconds):
    """`read()` again until `done(value)` or `seconds` passed; the last value."""
    deadline = time.monotonic() + seconds
    while True:
        value = read()
        if done(value) or time.monotonic() > deadline:
            return value
        time.sleep(0.2)


# Dates and times may be generated as text or, with a `format`, as date/datetime/UUID objects.
DATE = (datetime.date, str)
DATETIME = (datetime.datetime, str)
UUID = (uuid.UUID, str)


def check(condition, message):
    if not condition:
        raise Broken(message)


# --- the journey ------------------------------------------------------------------------------

steps = []


def step(function):
    steps.append(function)
    return function


j = SimpleNamespace()  # what a step hands on to the next


def app_model(name):
    return model(app_client, name)


def admin_model(name):
    return model(admin_client, name)


def app(tag, operation_id, method, path):
    return operation(app_client, tag, operation_id, method, path)


def admin(tag, operation_id, method, path):
    return operation(admin_client, tag, operation_id, method, path)


@step
def login():
    """reset-otp answers `{status: true}`; verify-otp answers data.access_token and the
    13-field profile (spec: other routes; design: OTP login). Sara is in test mode: code 1234."""
    j.auth = app_client.Client(base_url=os.environ["AUTH_URL"], timeout=TIMEOUT,
                               raise_on_unexpected_status=True)
    reset = app("login", "resetOtp", "GET", "/api/v1/clients/reset-otp")
    sent = answer(reset.sync_detailed(client=j.auth, contact_phone=SARA_PHONE), app_model("Sent"))
    check(field(sent, "status", bool) is True, "reset-otp did not answer status true")
    verify = app("login", "verifyOtp", "GET", "/api/v1/clients/verify-otp")
    login = answer(verify.sync_detailed(client=j.auth, contact_phone=SARA_PHONE, code="1234"),
                   app_model("WrappedLogin"))
    field(login, "status", int)
    data = field(login, "data", object)
    j.primary = field(data, "access_token", str)
    profile = field(data, "profile", app_model("Profile"))
    check_profile(profile)


def check_profile(profile):
    """The 13-field profile: every key always there; email, names and birth date nullable;
    `status` an open string (spec: Client profile)."""
    check(field(profile, "client_id", int) == SARA, f"not Sara's profile: {profile}")
    field(profile, "odoo_id", str)
    field(profile, "contact_phone", str)
    field(profile, "status", str)
    field(profile, "email_address", str, None)
    field(profile, "first_name", str, None)
    field(profile, "last_name", str, None)
    field(profile, "sex", int)
    field(profile, "birth_date", *DATE, None)
    for flag in ("receive_offers", "push_enabled", "is_food_truck_user", "is_cod_disabled"):
        check(field(profile, flag, int) in (0, 1), f"{flag} is not 0 or 1")


@step
def verify_token():
    """verify-token answers the bare 13-field profile (spec: other routes; design: tokens)."""
    j.primary_client = app_client.AuthenticatedClient(
        base_url=os.environ["AUTH_URL"], token=j.primary, timeout=TIMEOUT,
        raise_on_unexpected_status=True)
    op = app("tokens", "verifyToken", "GET", "/api/v1/clients/verify-token")
    check_profile(answer(op.sync_detailed(client=j.primary_client), app_model("Profile")))


@step
def exchange_token():
    """exchange-token with target_platform `legacy` (the TargetPlatform enum) answers
    `{status: 200, data: {token}}`; the spec allows `data: {}`, so `token` may be optional."""
    op = app("tokens", "exchangeToken", "POST", "/api/v1/clients/exchange-token")
    body = body_class(op)
    body_field_is_enum(body, "target_platform", "TargetPlatform")
    platform = member(app_client, "TargetPlatform", "legacy")
    exchanged = answer(op.sync_detailed(client=j.auth, body=body(token=j.primary,
                                                                   target_platform=platform)),
                       app_model("WrappedToken"))
    field(exchanged, "status", int)
    j.legacy = field(field(exchanged, "data", object), "token", str, optional=True)
    check(j.legacy, "exchange-token gave no legacy token")
    j.order = app_client.AuthenticatedClient(base_url=os.environ["ORDER_URL"], token=j.legacy,
                                             timeout=TIMEOUT, raise_on_unexpected_status=True)
    j.catalog = app_client.Client(base_url=os.environ["ORDER_URL"], timeout=TIMEOUT,
                                  raise_on_unexpected_status=True)


def balance():
    """The balance: id and user_id text, `points` decimal text, pointsExpirationDate a date
    text or null, every key always there (spec: Points balance)."""
    op = app("points", "getPointBalance", "GET", "/api/v2/client/points")
    found = answer(op.sync_detailed(client=j.order), app_model("Balance"))
    check(field(found, "id", str) == str(SARA), f"not Sara's balance: {found}")
    check(field(found, "user_id", str) == str(SARA), f"user_id is not the id: {found}")
    field(found, "pointsExpirationDate", *DATE, None)
    return field(found, "points", str)


@step
def points_balance():
    # demo.json: Sara earned 500.5 and 250 and spent 120.
    check(balance() == "630.5", "Sara's balance is not 630.5")


def check_offer(offer):
    """An offer: point_amount a number, purchased_point_amount a number or null and always
    there, amount two-decimal text (spec: Point offer). Its values as read."""
    read = SimpleNamespace(id=field(offer, "id", str),
                           point_amount=field(offer, "point_amount", NUMBER),
                           purchased=field(offer, "purchased_point_amount", NUMBER, None),
                           amount=field(offer, "amount", str))
    check(re.fullmatch(r"\d+\.\d\d", read.amount), f"amount of {offer}")
    return read


@step
def offers_and_occasions():
    """The offers (a bare array), one offer by its 24-hex id, the occasions with is_custom an
    integer (spec: point-offers, point-offers/{id}, point-occasions)."""
    offers = listed(app("offers", "listPointOffers", "GET", "/api/v2/client/point-offers")
                    .sync_detailed(client=j.order), app_model("Offer"))
    ids = [check_offer(offer).id for offer in offers]
    check(POINT_OFFER in ids, f"{POINT_OFFER} is not on sale")
    op = app("offers", "getPointOffer", "GET", "/api/v2/client/point-offers/{id}")
    one = check_offer(answer(op.sync_detailed(POINT_OFFER, client=j.order), app_model("Offer")))
    check((one.point_amount, one.purchased, one.amount) == (100, 120, "15.00"),
          f"offer {POINT_OFFER} is {one}")
    op = app("offers", "listPointOccasions", "GET", "/api/v2/client/point-occasions")
    occasions = listed(op.sync_detailed(client=j.order), app_model("Occasion"))
    check(occasions, "no occasions")
    for occasion in occasions:
        field(occasion, "id", str)
        field(occasion, "occasion", str)
        field(occasion, "occasion_en", str)
        check(field(occasion, "is_custom", int) in (0, 1), f"is_custom of {occasion}")


def check_order(order):
    """The nine-key order: status, payment_type and order_type enums; payment_status an enum or
    null; order_no and purchased_point_amount nullable; every key always there (spec: Point
    order). Its values as read."""
    read = SimpleNamespace(
        correlation_id=field(order, "correlation_id", *UUID),
        order_no=field(order, "order_no", int, None),
        status=field(order, "status", app_model("OrderStatus")),
        payment_status=field(order, "payment_status", app_model("PaymentStatus"), None),
        point_amount=field(order, "point_amount", NUMBER),
        purchased=field(order, "purchased_point_amount", NUMBER, None),
        money_amount=field(order, "money_amount", str),
        payment_type=field(order, "payment_type", app_model("PaymentType")),
        order_type=field(order, "order_type", app_model("OrderType")))
    check(re.fullmatch(r"\d+\.\d\d", read.money_amount), f"money of {order}")
    return read


def create_order(offer, recipient, payment_type):
    op = app("point orders", "createPointOrder", "POST", "/api/v2/client/point-orders")
    body = body_class(op)
    body_field_is_enum(body, "payment_type", "PaymentType")
    sent = body(point_offer_id=offer, to_client_id=recipient,
                payment_type=member(app_client, "PaymentType", payment_type))
    # The spec: 200, not 201.
    return check_order(answer(op.sync_detailed(client=j.order, body=sent), app_model("Order")))


@step
def order_paid_with_points():
    """A `point` order for Omar settles at once: `successful`, no payment status, a `transfer`
    (no occasion); Sara is charged purchased_point_amount (spec: States and transitions)."""
    order = create_order(POINT_OFFER, OMAR, "point")
    check((order.status, order.payment_status, order.order_type, order.payment_type)
          == ("successful", None, "transfer", "point"), f"the point order is {order}")
    check(order.order_no is not None and order.order_no >= 100000, f"order_no of {order}")
    j.gift = order.correlation_id
    check(balance() == "510.5", "Sara was not charged 120")


@step
def description():
    """The gift message for an offer: `{description}` text (spec: point-orders/description)."""
    op = app("point orders", "describePointOrder", "POST",
             "/api/v2/client/point-orders/description")
    body = body_class(op)(point_offer_id=POINT_OFFER)
    text = field(answer(op.sync_detailed(client=j.order, body=body), app_model("Description")),
                 "description", str)
    check("Sara" in text and "100" in text, f"the description is {text!r}")


def read_order(correlation):
    op = app("point orders", "getPointOrder", "GET",
             "/api/v2/client/point-orders/{correlation_id}")
    return check_order(answer(op.sync_detailed(correlation, client=j.order), app_model("Order")))


@step
def order_paid_by_card():
    """A `checkout` order waits unpaid (`initial_order`, null payment status); pay/card answers
    the payment service's `{id, status, redirect_url}`; after 3-D Secure the webhook makes it
    `successful`/`CAPTURED`, asynchronously: read back until then (spec: there is no refresh
    route, the client re-reads the order)."""
    order = create_order(CARD_OFFER, SARA, "checkout")
    check((order.status, order.payment_status) == ("initial_order", None), f"the order is {order}")
    j.card_order = order.correlation_id
    op = app("payments", "payPointOrderByCard", "POST",
             "/api/v2/client/point-orders/{correlation_id}/pay/card")
    card = body_class(op)(id="card_visa_4242", cvv="123")
    started = answer(op.sync_detailed(j.card_order, client=j.order, body=card),
                     app_model("PaymentStarted"))
    field(started, "id", str)
    check(field(started, "status", app_model("PaymentServiceStatus")) == "pending",
          f"pay/card answered {started}")
    # Null only when the payment service declined at once.
    redirect = field(started, "redirect_url", str, None)
    check(redirect.startswith(os.environ["SANDBOX_URL"] + "/3ds/"), f"redirect to {redirect}")
    # The 3-D Secure page is the sandbox's, not one of the services: plain HTTP.
    approved = httpx.post(redirect + "/approve", timeout=TIMEOUT)
    check(approved.status_code == 200, f"approve answered {approved.status_code}")
    paid = poll(lambda: read_order(j.card_order),
                lambda order: (order.status, order.payment_status) == ("successful", "CAPTURED"),
                seconds=20)
    check((paid.status, paid.payment_status) == ("successful", "CAPTURED"),
          f"20 s after approval the order is {paid}")
    check(balance() == "760.5", "Sara was not credited 250")


@step
def payment_session():
    """pay/session on a new checkout order answers `{id, session_token, ...}` (design: the
    payment service's session), typed."""
    j.session_order = create_order(CARD_OFFER, SARA, "checkout").correlation_id
    op = app("payments", "startPointOrderPaymentSession", "POST",
             "/api/v2/client/point-orders/{correlation_id}/pay/session")
    session = answer(op.sync_detailed(j.session_order, client=j.order, body=body_class(op)()),
                     app_model("PaymentSession"))
    field(session, "id", str)
    field(session, "session_token", str)


@step
def card_refused_by_the_payment_service():
    """A 4xx of the payment service comes back with its own status and body (spec: both pay
    routes; design: the sandbox's `fail4xx` cards answer 402 `{error: {code, message}}`)."""
    op = app("payments", "payPointOrderByCard", "POST",
             "/api/v2/client/point-orders/{correlation_id}/pay/card")
    card = body_class(op)(id="fail4xx_1", cvv="123")
    response = op.sync_detailed(j.session_order, client=j.order, body=card)
    check(response.status_code == 402, f"answered {response.status_code}: {response.content!r}")
    refused = response.parsed
    if refused is None:
        problem(UNTYPED, "the 402 body is not parsed: the document gives it no schema")
        check(b"card_declined" in response.content, f"402 body {response.content!r}")
        return
    is_model(refused, app_model("PaymentServiceError"), "the 402 body")
    # Optional in the document: the body is the payment service's, passed on unread.
    error = field(refused, "error", object, optional=True)
    check(error is not None, f"the 402 body is {refused}")
    check(field(error, "code", str) == "card_declined", f"the 402 body is {refused}")
    field(error, "message", str)


@step
def gift_card_code():
    """Redeeming WELCOME-100 credits 100 points: `{message, code, points}` (design: gift-card
    codes are single-use; the answer the spec leaves open)."""
    op = app("gift cards", "redeemGiftCardCode", "POST", "/api/v2/client/gift-card-code")
    redeemed = answer(op.sync_detailed(client=j.order, body=body_class(op)(code="WELCOME-100")),
                      app_model("Redeemed"))
    field(redeemed, "message", str)
    check(field(redeemed, "code", str) == "WELCOME-100", f"redeemed {redeemed}")
    check(field(redeemed, "points", str) == "100", f"redeemed {redeemed}")


@step
def history():
    """The history, newest first: `kind` a LedgerKind, `points` signed decimal text,
    correlation_id a UUID or null and always there (target: history entry)."""
    op = app("points", "getPointHistory", "GET", "/api/v2/client/point-history")
    page = answer(op.sync_detailed(client=j.order), app_model("HistoryPage"))
    entries = field(page, "data", list)
    check_meta(field(page, "meta", app_model("PageMeta")))
    kind = app_model("LedgerKind")
    got = []
    for entry in entries:
        is_model(entry, app_model("HistoryEntry"), "a history entry")
        field(entry, "id", int)
        field(entry, "created_at", *DATETIME)
        correlation = field(entry, "correlation_id", *UUID, None)
        got.append((field(entry, "kind", kind), field(entry, "points", str),
                    None if correlation is None else str(correlation)))
    got = got[:3]
    want = [("gift_card_credit", "100", None), ("purchase", "250", str(j.card_order)),
            ("gift_sent", "-120", str(j.gift))]
    check(got == want, f"the newest entries are {got}, not {want}")


def check_meta(meta):
    for key in ("totalItems", "page", "itemsPerPage", "totalPages"):
        field(meta, key, int)


@step
def faq():
    """Questions and answers in both languages, a bare array (spec: points-faq)."""
    op = app("points", "getPointsFaq", "GET", "/api/v2/client/points-faq")
    entries = listed(op.sync_detailed(client=j.order), app_model("Faq"))
    check(entries, "no FAQ")
    for entry in entries:
        for key in ("question_en", "answer_en", "question_ar", "answer_ar"):
            field(entry, key, str)


@step
def earn_rates():
    """Earn-rate rows: amount_from and amount_to numbers or null, always there; point_earn a
    number; the last row open-ended (spec: Earn-rate row)."""
    op = app("earn rates", "listEarnRates", "GET", "/api/v2/client/system_configs/point_rates")
    ends = []
    for rate in listed(op.sync_detailed(client=j.catalog), app_model("Rate")):
        field(rate, "amount_from", NUMBER, None)
        ends.append(field(rate, "amount_to", NUMBER, None))
        field(rate, "point_earn", NUMBER)
    check(ends == [50, 100, None], f"the rates end at {ends}")  # demo.json's three rows


def children(language=None):
    """The app's children of PARENT: `{data: [the ten-field items]}` (spec: Client child service
    item); the path id is an integer."""
    op = app("services", "listChildServices", "GET",
             "/api/v2/client/system-categories/{id}/children")
    integer_path_ids(op, "id")
    extra = {} if language is None else {"language": language}
    listed_children = answer(op.sync_detailed(PARENT, client=j.catalog, **extra),
                             app_model("ListedServiceItem"))
    ids = []
    for item in field(listed_children, "data", list):
        is_model(item, object, "a child")
        ids.append(field(item, "id", int))
        for key in ("title", "titleTranslated", "image", "thumbnail", "url",
                    "background_image_url", "serviceType", "status"):
            field(item, key, str)
        field(item, "ordering", int)
    return ids


@step
def parent_children():
    """Service 1 (Restaurants) holds children 4, 5 and 6, in display order."""
    ids = children()
    check(ids == CHILDREN, f"the children of 1 are {ids}")


@step
def nearest_store():
    """The nearest branch of merchant 77 at Riyadh's centre is store 10: `{store_id}`, an integer
    or null, always there; {merchant_id} is an integer (spec: nearest store)."""
    op = app("stores", "findNearestStore", "GET",
             "/api/v2/client/banners/merchant/{merchant_id}/nearest-store")
    integer_path_ids(op, "merchant_id")
    nearest = answer(op.sync_detailed(BURGER_BRAND, client=j.catalog, latitude=RIYADH[0],
                                      longitude=RIYADH[1]), app_model("NearestStore"))
    check(field(nearest, "store_id", int, None) == 10, f"the nearest store is {nearest}")


def candidates():
    """The operator's candidates of PARENT: `{data, meta}`, rows with hierarchyRole (always
    `child`), isSelected, parentId (text or null, always there: every candidate row carries
    it) and status a ServiceStatus (spec: Service; target: operator rows)."""
    op = admin("children", "listChildCandidates", "GET", "/api/v1/operator/services/{id}/children")
    integer_path_ids(op, "id")
    page = answer(op.sync_detailed(PARENT, client=j.operator), admin_model("ListPageCandidate"))
    rows = field(page, "data", list)
    check_meta(field(page, "meta", admin_model("PageMeta")))
    role, status = admin_model("HierarchyRole"), admin_model("ServiceStatus")
    found = {}
    for row in rows:
        is_model(row, object, "a candidate")
        field(row, "title", str)
        field(row, "titleTranslated", str)
        field(row, "status", status)
        field(row, "ordering", int)
        check(field(row, "hierarchyRole", role) == "child", f"a candidate is {row}")
        found[field(row, "id", int)] = SimpleNamespace(selected=field(row, "isSelected", bool),
                                                       parent=field(row, "parentId", str, None))
    return found


def set_children(**change):
    """Assign or detach: `{message, statusCode: 200}` (spec: PATCH children)."""
    op = admin("children", "updateChildren", "PATCH", "/api/v1/operator/services/{id}/children")
    integer_path_ids(op, "id")
    body = body_class(op)(**{PythonIdentifier(k, prefix="field"): v for k, v in change.items()})
    updated = answer(op.sync_detailed(PARENT, client=j.operator, body=body),
                     admin_model("ChildrenUpdated"))
    field(updated, "message", str)
    check(field(updated, "statusCode", int) == 200, f"the children update answered {updated}")


@step
def operator_candidates():
    """Child 8 is unassigned: a candidate of parent 1, not selected."""
    j.operator = admin_client.AuthenticatedClient(
        base_url=os.environ["OPERATOR_URL"], token=os.environ["OPERATOR_TOKEN"], timeout=TIMEOUT,
        raise_on_unexpected_status=True)
    rows = candidates()
    check(UNASSIGNED_CHILD in rows, f"{UNASSIGNED_CHILD} is not a candidate: {sorted(rows)}")
    check(rows[UNASSIGNED_CHILD] == SimpleNamespace(selected=False, parent=None),
          f"candidate {UNASSIGNED_CHILD} is {rows[UNASSIGNED_CHILD]}")


@step
def operator_assigns():
    """Assigning 8 to 1 makes it a selected candidate and one of the app's children of 1. The
    app's list is cached for 30 s per (service, language) and was read above in Arabic: read it
    in English (spec: the answer can change at any time; poll past the cache, never sleep)."""
    set_children(assignServiceIds=[UNASSIGNED_CHILD])
    rows = candidates()
    check(rows[UNASSIGNED_CHILD] == SimpleNamespace(selected=True, parent=str(PARENT)),
          f"candidate {UNASSIGNED_CHILD} is {rows[UNASSIGNED_CHILD]}")
    ids = poll(lambda: children("en-GB"), lambda ids: UNASSIGNED_CHILD in ids, seconds=35)
    check(UNASSIGNED_CHILD in ids, f"the app's children of 1 are {ids}")


@step
def operator_detaches():
    """Detaching 8 again leaves it an unassigned candidate."""
    set_children(unassignServiceIds=[UNASSIGNED_CHILD])
    rows = candidates()
    check(rows[UNASSIGNED_CHILD] == SimpleNamespace(selected=False, parent=None),
          f"candidate {UNASSIGNED_CHILD} is {rows[UNASSIGNED_CHILD]}")


def check_offer_record(record):
    """An offer as the back office sees it: decimals as exact text, every key always there."""
    read = SimpleNamespace(id=field(record, "id", str),
                           point_amount=field(record, "pointAmount", str),
                           purchased=field(record, "purchasedPointAmount", str, None),
                           amount=field(record, "amount", str),
                           sequence=field(record, "sequence", int, None),
                           active=field(record, "active", bool),
                           withdrawn=field(record, "withdrawn", bool))
    field(record, "createdAt", datetime.datetime)
    field(record, "updatedAt", datetime.datetime)
    return read


@step
def operator_offers():
    """The loyalty back office: an offer created through the admin client is on sale in the
    app's list at once, repriced there, and gone once withdrawn (spec of the app's offers;
    docs/decisions.md, "The loyalty back office")."""
    record = admin_model("OfferRecord")
    op = admin("offers", "createOffer", "POST", "/api/v1/operator/offers")
    # The create body's required keys are the generated model's required arguments.
    try:
        body_class(op)(amount="6.25")
        check(False, "the create body was made without pointAmount")
    except TypeError:
        pass
    body = body_class(op)(point_amount="40.5", purchased_point_amount="45", amount="6.25")
    created = check_offer_record(answer(op.sync_detailed(client=j.operator, body=body), record,
                                        status=201))
    check((created.point_amount, created.purchased, created.amount, created.active)
          == ("40.5", "45", "6.25", True), f"the offer created is {created}")
    op = admin("offers", "listOffers", "GET", "/api/v1/operator/offers")
    every = field(answer(op.sync_detailed(client=j.operator), admin_model("OfferList")), "data", list)
    check(created.id in [check_offer_record(r).id for r in every], "the new offer is not listed")
    on_sale = listed(app("offers", "listPointOffers", "GET", "/api/v2/client/point-offers")
                     .sync_detailed(client=j.order), app_model("Offer"))
    check(created.id in [check_offer(o).id for o in on_sale], "the app does not sell the new offer")

    op = admin("offers", "updateOffer", "PATCH", "/api/v1/operator/offers/{id}")
    changed = check_offer_record(answer(op.sync_detailed(created.id, client=j.operator,
                                                         body=body_class(op)(amount="7")), record))
    check(changed.amount == "7.00", f"the offer changed is {changed}")
    op = app("offers", "getPointOffer", "GET", "/api/v2/client/point-offers/{id}")
    check(check_offer(answer(op.sync_detailed(created.id, client=j.order), app_model("Offer"))).amount
          == "7.00", "the app does not see the new price")

    op = admin("offers", "withdrawOffer", "DELETE", "/api/v1/operator/offers/{id}")
    gone = check_offer_record(answer(op.sync_detailed(created.id, client=j.operator), record))
    check(gone.withdrawn and not gone.active, f"the offer withdrawn is {gone}")
    # A refusal of the back office is matched by its code, typed as the contract's closed set.
    op = admin("offers", "updateOffer", "PATCH", "/api/v1/operator/offers/{id}")
    refused = answer(op.sync_detailed(created.id, client=j.operator, body=body_class(op)(amount="8")),
                     admin_model("BackOfficeError"), status=409)
    code = field(refused, "code", admin_model("BackOfficeErrorCode"))
    check(code == admin_model("BackOfficeErrorCode").OFFER_WITHDRAWN, f"the refusal's code is {code}")
    op = admin("loyalty audit", "listLoyaltyAudit", "GET", "/api/v1/operator/loyalty/audit")
    trail = field(answer(op.sync_detailed(client=j.operator), admin_model("BackOfficeAuditPage")),
                  "data", list)
    actions = [check_trail_entry(entry) for entry in trail]
    check(actions[:3] == ["offer.withdraw", "offer.update", "offer.create"],
          f"the trail is {actions}")


# A trail entry's kind and record, by the record its action names (`<record>.<change>`).
TRAIL_KINDS = {
    "offer": ("OfferAuditEntry", "OfferRecord"),
    "occasion": ("OccasionAuditEntry", "OccasionRecord"),
    "expiry_policy": ("ExpiryPolicyAuditEntry", "ExpiryPolicy"),
    "adjustment": ("AdjustmentAuditEntry", "AdjustmentRecord"),
    "gift-code-batch": ("GiftCodeBatchAuditEntry", "GiftCodeBatch"),
    "earn-rates": ("EarnRatesAuditEntry", "EarnRateTable"),
}


def check_trail_entry(entry):
    """An entry of a back-office trail, read as the kind its action names: `after` the record,
    `before` the record or null (a creation, a read), an adjustment's the balance before it.
    Its action."""
    action = field(entry, "action", str)
    kind, record = TRAIL_KINDS[str(action.value if hasattr(action, "value") else action)
                               .split(".")[0]]
    is_model(entry, admin_model(kind), f"a {action} entry")
    if kind == "AdjustmentAuditEntry":
        field(field(entry, "before", admin_model("BalanceBefore")), "balance", str)
    else:
        field(entry, "before", admin_model(record), None)
    field(entry, "after", admin_model(record))
    return str(action.value if hasattr(action, "value") else action)


def check_batch(batch):
    """A gift-code batch as the back office sees it: points exact text, prefix and expiry
    always there, the codes counted by state."""
    is_model(batch, admin_model("GiftCodeBatch"), "a gift-code batch")
    counts = field(batch, "codes", admin_model("GiftCodeCounts"))
    read = SimpleNamespace(id=field(batch, "id", int), points=field(batch, "points", str),
                           prefix=field(batch, "prefix", str, None),
                           credited=field(counts, "credited", int),
                           withdrawn=field(counts, "withdrawn", int),
                           unused=field(counts, "unused", int))
    field(batch, "expiresAt", datetime.datetime, None)
    field(batch, "createdAt", datetime.datetime)
    return read


@step
def operator_gift_codes():
    """The loyalty back office: a super_admin issues a batch through the admin client, a code
    from its CSV is redeemed through the app client, the batch lists it credited to the
    client, and the rest withdrawn are refused (docs/decisions.md, "The loyalty back office")."""
    issuer = admin_client.AuthenticatedClient(
        base_url=os.environ["OPERATOR_URL"], token=os.environ["SUPER_ADMIN_TOKEN"],
        timeout=TIMEOUT, raise_on_unexpected_status=True)
    op = admin("gift codes", "issueGiftCodes", "POST", "/api/v1/operator/gift-code-batches")
    body = body_class(op)(reference="journey-print", count=2, points="25.5", prefix="EID")
    issued = check_batch(answer(op.sync_detailed(client=issuer, body=body),
                                admin_model("GiftCodeBatch"), status=201))
    check((issued.points, issued.prefix, issued.unused) == ("25.5", "EID", 2),
          f"the batch issued is {issued}")
    op = admin("gift codes", "exportGiftCodes", "GET",
               "/api/v1/operator/gift-code-batches/{id}/codes.csv")
    integer_path_ids(op, "id")
    printed = op.sync_detailed(issued.id, client=issuer)
    check(printed.status_code == 200, f"the CSV answered {printed.status_code}")
    rows = printed.content.decode().splitlines()
    check(rows[0] == "code,points,expires_at" and len(rows) == 3, f"the CSV is {rows}")
    code = rows[1].split(",")[0]

    op = app("gift cards", "redeemGiftCardCode", "POST", "/api/v2/client/gift-card-code")
    redeemed = answer(op.sync_detailed(client=j.order, body=body_class(op)(code=code)),
                      app_model("Redeemed"))
    check(field(redeemed, "points", str) == "25.5", f"redeemed {redeemed}")

    op = admin("gift codes", "getGiftCodeBatch", "GET", "/api/v1/operator/gift-code-batches/{id}")
    listing = answer(op.sync_detailed(issued.id, client=issuer), admin_model("GiftCodeBatchCodes"))
    check(check_batch(field(listing, "batch", admin_model("GiftCodeBatch"))).credited == 1,
          "the batch does not count the code credited")
    state = admin_model("GiftCodeState")
    codes = {field(c, "code", str): (field(c, "state", state), field(c, "client_id", int, None))
             for c in field(listing, "codes", list)}
    check(codes[code] == (member(admin_client, "GiftCodeState", "credited"), 1001),
          f"the code redeemed is {codes[code]}")

    op = admin("gift codes", "withdrawGiftCodes", "DELETE", "/api/v1/operator/gift-code-batches/{id}")
    after = check_batch(answer(op.sync_detailed(issued.id, client=issuer), admin_model("GiftCodeBatch")))
    check((after.credited, after.withdrawn) == (1, 1), f"the batch withdrawn is {after}")
    op = admin("gift codes", "listGiftCodeBatches", "GET", "/api/v1/operator/gift-code-batches")
    batches = field(answer(op.sync_detailed(client=j.operator), admin_model("GiftCodeBatchList")),
                    "data", list)
    check([check_batch(b).id for b in batches][:1] == [issued.id], "the batch is not listed first")


@step
def operator_earn_rates():
    """The earn-rate table replaced through the admin client on its version is what the app
    reads next; the catalog's trail records it."""
    op = admin("earn rates", "getEarnRates", "GET", "/api/v1/operator/earn-rates")
    table = answer(op.sync_detailed(client=j.operator), admin_model("EarnRateTable"))
    version = field(table, "version", int)
    op = admin("earn rates", "replaceEarnRates", "PUT", "/api/v1/operator/earn-rates")
    body = body_class(op).from_dict({"rates": [
        {"amount_from": "0", "amount_to": "60.50", "point_earn": "4"},
        {"amount_from": "60.5", "amount_to": None, "point_earn": "10.25"}], "version": version})
    replaced = answer(op.sync_detailed(client=j.operator, body=body), admin_model("EarnRateTable"))
    check(field(replaced, "version", int) > version, "the version did not move")
    # The back office answers the rows as exact decimal text, never a float.
    rows = [(field(r, "amount_from", str, None), field(r, "amount_to", str, None),
             field(r, "point_earn", str, None)) for r in field(replaced, "rates", list)]
    check(rows == [("0", "60.5", "4"), ("60.5", None, "10.25")], f"the rates answered are {rows}")
    op = app("earn rates", "listEarnRates", "GET", "/api/v2/client/system_configs/point_rates")
    ends = [field(r, "amount_to", NUMBER, None)
            for r in listed(op.sync_detailed(client=j.catalog), app_model("Rate"))]
    check(ends == [60.5, None], f"the app's rates end at {ends}")
    op = admin("loyalty audit", "listCatalogLoyaltyAudit", "GET", "/api/v1/operator/loyalty/catalog-audit")
    trail = field(answer(op.sync_detailed(client=j.operator), admin_model("BackOfficeAuditPage")),
                  "data", list)
    actions = [check_trail_entry(entry) for entry in trail]
    check(actions[:1] == ["earn-rates.replace"], f"the trail begins {actions[:1]}")


def main():
    global current_step
    broken = []
    for function in steps:
        current_step = function.__name__
        try:
            function()
        except Broken as error:
            broken.append((current_step, str(error)))
        except Exception as error:  # a defect that stops the step, e.g. a missing earlier value
            where = traceback.extract_tb(error.__traceback__)[-1]
            broken.append((current_step, f"{type(error).__name__}: {error} (line {where.lineno})"))
    if not problems and not broken:
        print("the journey through the generated app and admin clients: ok")
        return 0
    print(f"the journey through the generated clients failed: {len(problems)} typing defects, "
          f"{len(broken)} steps broken")
    for kind in (UNTYPED, OPTIONAL, CLOSED_SET, STRING_ID, OPERATION, OTHER):
        lines = [(s, m) for (k, m), s in problems.items() if k == kind]
        if lines:
            print(f"\n{kind} ({len(lines)}):")
            for step_name, message in lines:
                print(f"  [{step_name}] {message}")
    if broken:
        print("\nsteps broken (wrong status or value, or stopped by a defect above):")
        for step_name, message in broken:
            print(f"  [{step_name}] {message}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
