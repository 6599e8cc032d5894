/**
 * The mobile app's whole journey and the admin panel's, written with openapi-fetch against the
 * types openapi-typescript generates from the app and admin documents (app.ts, admin.ts; see
 * check.sh). It would run for real against a stack, but check.sh only type-checks it: every
 * route of both documents is called and every field of every success answer is read through an
 * exact-type check, so a document that leaves an answer untyped, marks an always-present key
 * optional, types a closed set as a free string or an integer id as a string fails to compile.
 *
 * Expectations come from docs/spec/*.md (the source of truth for fields, types, nullability and
 * closed sets), then docs/design.md, then, where both are silent, the Rust types that serialise
 * the answers: a key serde always writes is required, and nullable when it is an Option.
 */
import createClient, { type Middleware } from "openapi-fetch";
import type { components as AppComponents, operations as AppOperations, paths as AppPaths } from "./app.js";
import type { components as AdminComponents, operations as AdminOperations, paths as AdminPaths } from "./admin.js";

// ---------------------------------------------------------------------------------------------
// Exact-type checks
// ---------------------------------------------------------------------------------------------

type Equals<A, B> = (<G>() => G extends A ? 1 : 2) extends (<G>() => G extends B ? 1 : 2) ? true : false;
/** Type-level check; a failure names both types: `{actual: ...; expected: ...}`. */
type Check<T extends true> = T;
type Exact<Actual, Expected> = Equals<Actual, Expected> extends true ? true : { actual: Actual; expected: Expected };
/** Type-level check that a set difference is empty; a failure names what is left over. */
type Nothing<T extends never> = T;

/** Passes `value` on (as `Expected`, so that one mismatch is one error); fails to compile unless
 * its type is exactly `Expected`. */
function exactly<Expected>() {
  return <Actual>(value: Actual, ..._: Equals<Actual, Expected> extends true ? [] : [never]): Expected =>
    value as unknown as Expected;
}

/** Passes `value` on; fails to compile unless its keys are exactly `Expected` (none unread). */
function keysAre<Expected extends PropertyKey>() {
  return <Actual>(value: Actual, ..._: Equals<keyof Actual, Expected> extends true ? [] : [never]) => value;
}

/** The JSON body a route answers with `Status` (`never` when the document gives none). */
type Answer<P, Path extends keyof P, M extends keyof P[Path], Status extends PropertyKey> =
  P[Path][M] extends { responses: infer R } ? JsonAt<R, Status> : never;
type JsonAt<R, Status extends PropertyKey> = Status extends keyof R
  ? R[Status] extends { content: { "application/json": infer B } } ? B : never
  : never;
type PathParams<P, Path extends keyof P, M extends keyof P[Path]> =
  P[Path][M] extends { parameters: { path: infer X } } ? X : never;
type JsonRequest<P, Path extends keyof P, M extends keyof P[Path]> =
  P[Path][M] extends { requestBody?: infer RB }
    ? NonNullable<RB> extends { content: { "application/json": infer B } } ? B : never
    : never;

/** Every `METHOD /path` a document serves: the journey lists each below, so a new route fails. */
type Method = "get" | "put" | "post" | "delete" | "options" | "head" | "patch" | "trace";
type RouteOf<P> = {
  [Path in keyof P & string]: {
    [M in Method & keyof P[Path]]-?: [Exclude<P[Path][M], undefined>] extends [never]
      ? never
      : `${Uppercase<M>} ${Path}`;
  }[Method & keyof P[Path]];
}[keyof P & string];

/** The answer's data, or a thrown error naming the step, the status and the body. */
async function ok<D>(step: string, call: Promise<{ data?: D; error?: unknown; response: Response }>): Promise<D> {
  const { data, error, response } = await call;
  if (data === undefined) {
    throw new Error(`${step}: HTTP ${response.status} ${JSON.stringify(error)}`);
  }
  return data;
}

/** The refusal a step expects, or a thrown error when it got anything else. */
async function refused(
  step: string,
  status: number,
  call: Promise<{ data?: unknown; error?: unknown; response: Response }>,
): Promise<unknown> {
  const { error, response } = await call;
  if (response.status !== status) {
    throw new Error(`${step}: expected HTTP ${status}, got ${response.status}`);
  }
  return error;
}

/** `Authorization: Bearer <token>` on every call of a client, once the token is known. */
function bearer(token: () => string | undefined): Middleware {
  return {
    onRequest({ request }) {
      const value = token();
      if (value !== undefined) {
        request.headers.set("Authorization", `Bearer ${value}`);
      }
      return request;
    },
  };
}

// ---------------------------------------------------------------------------------------------
// What the documents must say, checked once (type level)
// ---------------------------------------------------------------------------------------------

type AppSchemas = AppComponents["schemas"];
type AdminSchemas = AdminComponents["schemas"];

// Closed sets are enums, component schemas of these names (spec: point order, balance history
// kinds as the ledger stores them, exchange-token's two platforms, the service hierarchy).
type OrderStatus = "initial_order" | "paid" | "payment_failed" | "successful";
type PaymentStatus = "CAPTURED" | "FAILED" | "AUTHORIZED";
type PaymentType = "point" | "checkout";
type OrderType = "gift" | "transfer";
type TargetPlatform = "primary" | "legacy";
type LedgerKind =
  | "earn" | "spend" | "gift_sent" | "gift_received" | "purchase" | "gift_card_credit" | "adjustment" | "expiry"
  | "support_adjustment";
type HierarchyRole = "parent" | "standalone" | "child";
type ServiceStatus = "active" | "hidden";
type OperatorRole = "super_admin" | "admin" | "merchant_manager" | "store_manager" | "data_entry";
type BackOfficeAction =
  | "offer.create" | "offer.update" | "offer.withdraw" | "occasion.create" | "occasion.update"
  | "occasion.withdraw" | "expiry_policy.replace" | "adjustment.credit" | "adjustment.debit"
  | "gift-code-batch.issue" | "gift-code-batch.read" | "gift-code-batch.export" | "gift-code-batch.withdraw"
  | "earn-rates.replace";

type _closedSets = [
  Check<Exact<AppSchemas["OrderStatus"], OrderStatus>>,
  Check<Exact<AppSchemas["PaymentStatus"], PaymentStatus>>,
  Check<Exact<AppSchemas["PaymentType"], PaymentType>>,
  Check<Exact<AppSchemas["OrderType"], OrderType>>,
  Check<Exact<AppSchemas["TargetPlatform"], TargetPlatform>>,
  Check<Exact<AppSchemas["LedgerKind"], LedgerKind>>,
  Check<Exact<AdminSchemas["HierarchyRole"], HierarchyRole>>,
  Check<Exact<AdminSchemas["ServiceStatus"], ServiceStatus>>,
  Check<Exact<AdminSchemas["OperatorRole"], OperatorRole>>,
  // Each kind of trail entry takes its own actions; together they are the closed set.
  Check<Exact<AdminSchemas["BackOfficeAuditEntry"]["action"], BackOfficeAction>>,
  // A back-office conflict is the back office's refusal, code and all.
  Check<Exact<Answer<AdminPaths, "/api/v1/operator/offers/{id}", "patch", 409>, AdminSchemas["BackOfficeError"]>>,
];

// Operation ids, camelCase: what generated clients name their functions after.
type AppOperationId =
  | "resetOtp" | "verifyOtp"
  | "verifyToken" | "exchangeToken" | "findClientByPhone"
  | "updateProfile" | "updateSetting" | "addDeviceId"
  | "listAddresses" | "createAddress" | "getAddress" | "updateAddress" | "deleteAddress"
  | "getPointBalance" | "getPointHistory" | "getPointsFaq"
  | "listPointOffers" | "getPointOffer" | "listPointOccasions"
  | "createPointOrder" | "describePointOrder" | "getPointOrder"
  | "payPointOrderByCard" | "startPointOrderPaymentSession"
  | "listEarnRates" | "redeemGiftCardCode"
  | "listHomeServices" | "getService" | "listChildServices"
  | "listBranches" | "getStore" | "findNearestStore";
type AdminOperationId =
  | "listServices" | "listAllServices" | "createService" | "getService" | "updateService"
  | "listChildCandidates" | "updateChildren" | "listAuditEntries"
  | "listOffers" | "createOffer" | "updateOffer" | "withdrawOffer" | "listLoyaltyAudit"
  | "adjustPoints" | "listOccasions" | "createOccasion" | "updateOccasion" | "withdrawOccasion"
  | "getExpiryPolicy" | "replaceExpiryPolicy" | "dryRunExpiryPolicy" | "getClientPoints"
  | "listClientReads"
  | "listGiftCodeBatches" | "issueGiftCodes" | "getGiftCodeBatch" | "exportGiftCodes" | "withdrawGiftCodes"
  | "getEarnRates" | "replaceEarnRates" | "listCatalogLoyaltyAudit";
type _operationIds = [
  Nothing<Exclude<AppOperationId, keyof AppOperations>>, // ids the app document lacks
  Nothing<Exclude<keyof AppOperations, AppOperationId>>, // ids it has instead
  Nothing<Exclude<AdminOperationId, keyof AdminOperations>>,
  Nothing<Exclude<keyof AdminOperations, AdminOperationId>>,
];

// Integer path ids (spec: service and store ids are integers; the operator's service id too).
type _integerIds = [
  Check<Exact<PathParams<AppPaths, "/api/v1/clients/{client_id}", "put">["client_id"], number>>,
  Check<Exact<PathParams<AppPaths, "/api/v2/client/system-categories/{id}", "get">["id"], number>>,
  Check<Exact<PathParams<AppPaths, "/api/v2/client/system-categories/{id}/children", "get">["id"], number>>,
  Check<Exact<PathParams<AppPaths, "/api/v2/client/stores/{id}", "get">["id"], number>>,
  Check<Exact<
    PathParams<AppPaths, "/api/v2/client/banners/merchant/{merchant_id}/nearest-store", "get">["merchant_id"],
    number
  >>,
  Check<Exact<PathParams<AdminPaths, "/api/v1/operator/services/{id}", "get">["id"], number>>,
  Check<Exact<PathParams<AdminPaths, "/api/v1/operator/services/{id}", "patch">["id"], number>>,
  Check<Exact<PathParams<AdminPaths, "/api/v1/operator/services/{id}/children", "get">["id"], number>>,
  Check<Exact<PathParams<AdminPaths, "/api/v1/operator/services/{id}/children", "patch">["id"], number>>,
  Check<Exact<PathParams<AdminPaths, "/api/v1/operator/clients/{id}/adjustments", "post">["id"], number>>,
  Check<Exact<PathParams<AdminPaths, "/api/v1/operator/clients/{id}/points", "get">["id"], number>>,
  Check<Exact<PathParams<AdminPaths, "/api/v1/operator/gift-code-batches/{id}", "get">["id"], number>>,
  Check<Exact<PathParams<AdminPaths, "/api/v1/operator/gift-code-batches/{id}", "delete">["id"], number>>,
  Check<Exact<PathParams<AdminPaths, "/api/v1/operator/gift-code-batches/{id}/codes.csv", "get">["id"], number>>,
];
// Text ids stay text: address ids are 24 hex, order ids UUIDs, offer ids 24 hex.
type _textIds = [
  Check<Exact<PathParams<AppPaths, "/api/v1/clients/address-book/{id}", "get">["id"], string>>,
  Check<Exact<PathParams<AppPaths, "/api/v2/client/point-offers/{id}", "get">["id"], string>>,
  Check<Exact<PathParams<AppPaths, "/api/v2/client/point-orders/{correlation_id}", "get">["correlation_id"], string>>,
];

// Closed sets the app sends: exchange-token's target and the order's payment type.
type _requestSets = [
  Check<Exact<JsonRequest<AppPaths, "/api/v1/clients/exchange-token", "post">["target_platform"], TargetPlatform>>,
  Check<Exact<JsonRequest<AppPaths, "/api/v2/client/point-orders", "post">["payment_type"], PaymentType>>,
];

// The back office's create bodies name their required keys and take null only where the
// server does: a create without a required key, or with null where none is accepted, is a
// type error (each line below fails to compile without its error).
type OfferCreate = JsonRequest<AdminPaths, "/api/v1/operator/offers", "post">;
type OfferChange = JsonRequest<AdminPaths, "/api/v1/operator/offers/{id}", "patch">;
type OccasionCreate = JsonRequest<AdminPaths, "/api/v1/operator/occasions", "post">;
// @ts-expect-error pointAmount is required
const _offerWithoutPoints: OfferCreate = { amount: "6.25" };
// @ts-expect-error active is true or false, never null
const _offerActiveNull: OfferCreate = { pointAmount: "40", amount: "6.25", active: null };
// @ts-expect-error a change's amount is a price, never null
const _changeAmountNull: OfferChange = { amount: null };
// @ts-expect-error occasionEn is required
const _occasionWithoutLabel: OccasionCreate = { occasionAr: null };
// ... and where null is accepted, it type-checks.
const _offerNulls: OfferCreate = { pointAmount: "40", amount: "6.25", purchasedPointAmount: null, sequence: null };
const _changeNulls: OfferChange = { sequence: null, purchasedPointAmount: null };
void [_offerWithoutPoints, _offerActiveNull, _changeAmountNull, _occasionWithoutLabel, _offerNulls, _changeNulls];

// The app talks to two services, one base URL each: the auth service's /api/v1/clients...
// routes and the order service's /api/v2/client/... routes, and nothing else (not /api/v1/users).
type AuthPaths = Pick<AppPaths, Extract<keyof AppPaths, `/api/v1/clients${string}`>>;
type OrderPaths = Pick<AppPaths, Extract<keyof AppPaths, `/api/v2/client/${string}`>>;
type _twoServices = Check<Exact<keyof AuthPaths | keyof OrderPaths, keyof AppPaths>>;

// Every route of each document, and the journey step that calls it: a route added to a
// document without a step here fails to compile, and so does a step whose route is gone.
const appSteps: { [R in RouteOf<AppPaths>]: string } = {
  "GET /api/v1/clients/reset-otp": "login",
  "GET /api/v1/clients/verify-otp": "login",
  "POST /api/v1/clients/exchange-token": "tokens",
  "GET /api/v1/clients/verify-token": "tokens",
  "GET /api/v1/clients": "tokens",
  "PUT /api/v1/clients/{client_id}": "profile",
  "PUT /api/v1/clients/setting": "profile",
  "POST /api/v1/clients/add-device-id": "profile",
  "GET /api/v1/clients/address-book": "address book",
  "POST /api/v1/clients/address-book": "address book",
  "GET /api/v1/clients/address-book/{id}": "address book",
  "PUT /api/v1/clients/address-book/{id}": "address book",
  "DELETE /api/v1/clients/address-book/{id}": "address book",
  "GET /api/v2/client/points": "balance, history, faq",
  "GET /api/v2/client/point-history": "balance, history, faq",
  "GET /api/v2/client/points-faq": "balance, history, faq",
  "GET /api/v2/client/point-offers": "offers, occasions",
  "GET /api/v2/client/point-offers/{id}": "offers, occasions",
  "GET /api/v2/client/point-occasions": "offers, occasions",
  "POST /api/v2/client/point-orders/description": "orders",
  "POST /api/v2/client/point-orders": "orders",
  "GET /api/v2/client/point-orders/{correlation_id}": "orders",
  "POST /api/v2/client/point-orders/{correlation_id}/pay/card": "payments",
  "POST /api/v2/client/point-orders/{correlation_id}/pay/session": "payments",
  "GET /api/v2/client/system_configs/point_rates": "earn rates",
  "POST /api/v2/client/gift-card-code": "gift card",
  "GET /api/v2/client/system-categories": "services",
  "GET /api/v2/client/system-categories/{id}": "services",
  "GET /api/v2/client/system-categories/{id}/children": "services",
  "GET /api/v2/client/banners/merchant/{merchant_id}/nearest-store": "stores",
  "GET /api/v2/client/stores/{id}": "stores",
  "GET /api/v2/client/stores": "stores",
};
const adminSteps: { [R in RouteOf<AdminPaths>]: string } = {
  "GET /api/v1/operator/services": "services",
  "GET /api/v1/operator/services/all/without-pagination": "services",
  "POST /api/v1/operator/services": "services",
  "GET /api/v1/operator/services/{id}": "services",
  "PATCH /api/v1/operator/services/{id}": "services",
  "GET /api/v1/operator/services/{id}/children": "children",
  "PATCH /api/v1/operator/services/{id}/children": "children",
  "GET /api/v1/operator/audit": "audit",
  "GET /api/v1/operator/offers": "offers",
  "POST /api/v1/operator/offers": "offers",
  "PATCH /api/v1/operator/offers/{id}": "offers",
  "DELETE /api/v1/operator/offers/{id}": "offers",
  "GET /api/v1/operator/loyalty/audit": "offers",
  "POST /api/v1/operator/clients/{id}/adjustments": "client support",
  "GET /api/v1/operator/occasions": "occasions",
  "POST /api/v1/operator/occasions": "occasions",
  "PATCH /api/v1/operator/occasions/{id}": "occasions",
  "DELETE /api/v1/operator/occasions/{id}": "occasions",
  "GET /api/v1/operator/expiry-policy": "expiry policy",
  "PUT /api/v1/operator/expiry-policy": "expiry policy",
  "POST /api/v1/operator/expiry-policy/dry-run": "expiry policy",
  "GET /api/v1/operator/clients/{id}/points": "client support",
  "GET /api/v1/operator/loyalty/client-reads": "client support",
  "GET /api/v1/operator/gift-code-batches": "gift codes",
  "POST /api/v1/operator/gift-code-batches": "gift codes",
  "GET /api/v1/operator/gift-code-batches/{id}": "gift codes",
  "GET /api/v1/operator/gift-code-batches/{id}/codes.csv": "gift codes",
  "DELETE /api/v1/operator/gift-code-batches/{id}": "gift codes",
  "GET /api/v1/operator/earn-rates": "earn rates",
  "PUT /api/v1/operator/earn-rates": "earn rates",
  "GET /api/v1/operator/loyalty/catalog-audit": "earn rates",
};

// ---------------------------------------------------------------------------------------------
// Readers: each reads every field of one answer shape with its exact type
// ---------------------------------------------------------------------------------------------

/** The 13-field profile (spec: "Client profile"; nullable keys are always there). */
type Profile = Answer<AppPaths, "/api/v1/clients/verify-token", "get", 200>;
function readProfile(profile: Profile): void {
  keysAre<
    | "client_id" | "odoo_id" | "contact_phone" | "status" | "email_address" | "first_name" | "last_name"
    | "sex" | "birth_date" | "receive_offers" | "push_enabled" | "is_food_truck_user" | "is_cod_disabled"
  >()(profile);
  exactly<number>()(profile.client_id);
  exactly<string>()(profile.odoo_id);
  exactly<string>()(profile.contact_phone);
  exactly<string>()(profile.status); // the spec leaves the set open ("the full set ... is not shown")
  exactly<string | null>()(profile.email_address);
  exactly<string | null>()(profile.first_name);
  exactly<string | null>()(profile.last_name);
  exactly<number>()(profile.sex);
  exactly<string | null>()(profile.birth_date);
  exactly<number>()(profile.receive_offers);
  exactly<number>()(profile.push_enabled);
  exactly<number>()(profile.is_food_truck_user);
  exactly<number>()(profile.is_cod_disabled);
}

/** Envelope A (spec: `{status, message, stack?}`; stack only outside production). */
function readEnvelopeA(refusal: Answer<AppPaths, "/api/v1/clients/{client_id}", "put", 400>): void {
  keysAre<"status" | "message" | "stack">()(refusal);
  exactly<number>()(refusal.status);
  exactly<string>()(refusal.message);
  exactly<string | undefined>()(refusal.stack);
}

/** A saved address (the spec does not show it; the auth service's `Address` always writes all
 * thirteen keys, the three optional texts as null). */
type Address = Answer<AppPaths, "/api/v1/clients/address-book/{id}", "get", 200>["data"];
function readAddress(address: Address): void {
  keysAre<
    | "id" | "client_id" | "label" | "address_line" | "city" | "district" | "building" | "latitude"
    | "longitude" | "notes" | "is_default" | "created_at" | "updated_at"
  >()(address);
  exactly<string>()(address.id);
  exactly<number>()(address.client_id);
  exactly<string>()(address.label);
  exactly<string>()(address.address_line);
  exactly<string>()(address.city);
  exactly<string | null>()(address.district);
  exactly<string | null>()(address.building);
  exactly<number>()(address.latitude);
  exactly<number>()(address.longitude);
  exactly<string | null>()(address.notes);
  exactly<boolean>()(address.is_default); // spec: "`is_default` is a boolean"
  exactly<string>()(address.created_at);
  exactly<string>()(address.updated_at);
}

/** A point offer (spec: "Point offer"; purchased_point_amount null, never absent). */
type Offer = Answer<AppPaths, "/api/v2/client/point-offers/{id}", "get", 200>;
function readOffer(offer: Offer): void {
  keysAre<"id" | "point_amount" | "purchased_point_amount" | "amount">()(offer);
  exactly<string>()(offer.id);
  exactly<number>()(offer.point_amount);
  exactly<number | null>()(offer.purchased_point_amount);
  exactly<string>()(offer.amount); // two decimals, as text
}

/** The nine keys of a point order (spec: "Point order", same shape from create and get). */
type Order = Answer<AppPaths, "/api/v2/client/point-orders/{correlation_id}", "get", 200>;
function readOrder(order: Order): void {
  keysAre<
    | "correlation_id" | "order_no" | "status" | "payment_status" | "point_amount" | "purchased_point_amount"
    | "money_amount" | "payment_type" | "order_type"
  >()(order);
  exactly<string>()(order.correlation_id);
  exactly<number | null>()(order.order_no); // null only on orders copied from the legacy system
  exactly<OrderStatus>()(order.status);
  exactly<PaymentStatus | null>()(order.payment_status);
  exactly<number>()(order.point_amount);
  exactly<number | null>()(order.purchased_point_amount);
  exactly<string>()(order.money_amount);
  exactly<PaymentType>()(order.payment_type);
  exactly<OrderType>()(order.order_type);
}

/** Envelope B (spec: `{success: false, error: {code, message, details?}}`). */
type EnvelopeB = Extract<Answer<AppPaths, "/api/v2/client/point-orders", "post", 400>, { success: unknown }>;
function readEnvelopeB(refusal: EnvelopeB): void {
  keysAre<"success" | "error">()(refusal);
  exactly<boolean>()(refusal.success);
  keysAre<"code" | "message" | "details">()(refusal.error);
  exactly<string>()(refusal.error.code);
  exactly<string>()(refusal.error.message);
  // Only a body that failed the schema has details: `formErrors`, and `fieldErrors` by field.
  const details = exactly<{ formErrors: string[]; fieldErrors: { [field: string]: string[] } } | undefined>()(
    refusal.error.details,
  );
  if (details !== undefined) {
    keysAre<"formErrors" | "fieldErrors">()(details);
    exactly<string[]>()(details.formErrors);
    for (const [field, messages] of Object.entries(details.fieldErrors)) {
      exactly<string>()(field);
      exactly<string[]>()(messages);
    }
  }
}

/** Envelope C (design: the order service's own routes answer `{message, statusCode}`). */
function readEnvelopeC(refusal: Answer<AppPaths, "/api/v2/client/gift-card-code", "post", 404>): void {
  keysAre<"message" | "statusCode">()(refusal);
  exactly<string>()(refusal.message);
  exactly<number>()(refusal.statusCode);
}

/** A client service item (spec: "Client child service item", the home list's item too). */
type ServiceItem = Answer<AppPaths, "/api/v2/client/system-categories/{id}/children", "get", 200>["data"][number];
function readServiceItem(item: ServiceItem): void {
  keysAre<
    | "id" | "title" | "titleTranslated" | "image" | "thumbnail" | "url" | "background_image_url"
    | "serviceType" | "status" | "ordering"
  >()(item);
  exactly<number>()(item.id);
  exactly<string>()(item.title);
  exactly<string>()(item.titleTranslated);
  exactly<string>()(item.image);
  exactly<string>()(item.thumbnail);
  exactly<string>()(item.url);
  exactly<string>()(item.background_image_url);
  exactly<string>()(item.serviceType); // `default` seen: left open by the spec
  exactly<string>()(item.status); // `active` seen: left open by the spec
  exactly<number>()(item.ordering);
}

/** A store (the spec shows only merchant_id; the order service's `Store` writes all eight). */
type Store = Answer<AppPaths, "/api/v2/client/stores/{id}", "get", 200>;
function readStore(store: Store): void {
  keysAre<
    | "id" | "merchant_id" | "name" | "latitude" | "longitude" | "management_status" | "is_online"
    | "store_disabled_ordering"
  >()(store);
  exactly<number>()(store.id);
  exactly<number>()(store.merchant_id); // the brand (collection) id
  exactly<string>()(store.name);
  exactly<number | null>()(store.latitude);
  exactly<number | null>()(store.longitude);
  exactly<string>()(store.management_status);
  exactly<boolean | null>()(store.is_online);
  exactly<boolean>()(store.store_disabled_ordering);
}

/** `{totalItems, page, itemsPerPage, totalPages}` of the paged lists. */
function readPageMeta(meta: Answer<AppPaths, "/api/v2/client/point-history", "get", 200>["meta"]): void {
  keysAre<"totalItems" | "page" | "itemsPerPage" | "totalPages">()(meta);
  exactly<number>()(meta.totalItems);
  exactly<number>()(meta.page);
  exactly<number>()(meta.itemsPerPage);
  exactly<number>()(meta.totalPages);
}

/** An operator service row, less the hierarchy fields (spec: "Service", `title`/`titleTranslated`;
 * the rest as the operator service's `ServiceView` always writes it). */
type BareServiceRow = Answer<AdminPaths, "/api/v1/operator/services/all/without-pagination", "get", 200>[number];
type BareServiceKeys =
  | "id" | "title" | "titleTranslated" | "status" | "logo" | "logo_variants" | "ordering" | "image"
  | "image_en" | "thumbnail" | "thumbnail_en" | "url" | "background_image_url" | "serviceType"
  | "created_at" | "updated_at";
function readBareServiceRow(row: BareServiceRow): void {
  // The variant list omits hierarchyRole and parentId (spec), and isSelected is candidates' own.
  keysAre<BareServiceKeys>()(row);
  readServiceFields(row);
}
function readServiceFields(row: Pick<BareServiceRow, BareServiceKeys>): void {
  exactly<number>()(row.id);
  exactly<string>()(row.title); // Arabic name
  exactly<string>()(row.titleTranslated); // English name
  exactly<ServiceStatus>()(row.status);
  exactly<string>()(row.logo);
  exactly<unknown>()(row.logo_variants); // spec: "any or null"
  exactly<number>()(row.ordering);
  exactly<string | null>()(row.image);
  exactly<string | null>()(row.image_en);
  exactly<string | null>()(row.thumbnail);
  exactly<string | null>()(row.thumbnail_en);
  exactly<string | null>()(row.url);
  exactly<string | null>()(row.background_image_url);
  exactly<string>()(row.serviceType);
  exactly<string>()(row.created_at);
  exactly<string>()(row.updated_at);
}

/** A list or detail row: always with hierarchyRole and parentId (a stringified bigint or null). */
type ServiceRow = Answer<AdminPaths, "/api/v1/operator/services/{id}", "get", 200>;
function readServiceRow(row: ServiceRow): void {
  keysAre<BareServiceKeys | "hierarchyRole" | "parentId">()(row);
  readServiceFields(row);
  exactly<HierarchyRole>()(row.hierarchyRole);
  exactly<string | null>()(row.parentId);
}

/** A children candidate: a list row plus isSelected (true when it is already this parent's). */
type CandidateRow = Answer<AdminPaths, "/api/v1/operator/services/{id}/children", "get", 200>["data"][number];
function readCandidateRow(row: CandidateRow): void {
  keysAre<BareServiceKeys | "hierarchyRole" | "parentId" | "isSelected">()(row);
  readServiceFields(row);
  exactly<HierarchyRole>()(row.hierarchyRole); // always `child` here
  exactly<string | null>()(row.parentId);
  exactly<boolean>()(row.isSelected);
}

// ---------------------------------------------------------------------------------------------
// The app's journey
// ---------------------------------------------------------------------------------------------

export interface Urls {
  auth: string;
  order: string;
  operator: string;
}

export interface Tokens {
  /** A client in test mode, who logs in with the fixed OTP code. */
  contactPhone: string;
  otpCode: string;
  /** An operator token with role admin or super_admin. */
  operator: string;
}

/** Data of deploy/fixtures/demo.json the journey starts from. */
const demo = {
  recipientPhone: "+966500000002",
  giftCardCode: "WELCOME-100",
  unknownGiftCardCode: "NO-SUCH-CODE",
  bannerNearestBranchMerchantId: 77,
  savedCard: "card_visa_4242",
  refusedCard: "fail4xx_card", // the sandbox answers 402 for card ids starting `fail4xx`
};

export async function journey(urls: Urls, tokens: Tokens): Promise<void> {
  await app(urls, tokens);
  await admin(urls, tokens);
  console.log(`walked ${Object.keys(appSteps).length} app routes and ${Object.keys(adminSteps).length} admin routes`);
}

async function app(urls: Urls, tokens: Tokens): Promise<void> {
  // One client per service; the auth routes take the primary token, the order service's the
  // legacy one (spec: "legacy token only on the dev environment").
  let primaryToken: string | undefined;
  let legacyToken: string | undefined;
  const auth = createClient<AuthPaths>({ baseUrl: urls.auth });
  auth.use(bearer(() => primaryToken));
  const order = createClient<OrderPaths>({ baseUrl: urls.order });
  order.use(bearer(() => legacyToken));

  // --- login --------------------------------------------------------------------------------
  const sent = await ok("reset-otp", auth.GET("/api/v1/clients/reset-otp", {
    params: { query: { contact_phone: tokens.contactPhone } },
  }));
  keysAre<"status">()(sent);
  exactly<boolean>()(sent.status); // `{status: true}`

  const login = await ok("verify-otp", auth.GET("/api/v1/clients/verify-otp", {
    params: { query: { contact_phone: tokens.contactPhone, code: tokens.otpCode } },
  }));
  keysAre<"status" | "data">()(login);
  exactly<number>()(login.status);
  keysAre<"access_token" | "profile">()(login.data);
  primaryToken = exactly<string>()(login.data.access_token);
  readProfileOf(login.data.profile);

  // --- tokens -------------------------------------------------------------------------------
  const exchanged = await ok("exchange-token", auth.POST("/api/v1/clients/exchange-token", {
    body: { token: primaryToken, target_platform: "legacy" },
  }));
  keysAre<"status" | "data">()(exchanged);
  exactly<number>()(exchanged.status);
  keysAre<"token">()(exchanged.data);
  legacyToken = exactly<string>()(exchanged.data.token);

  const me = readProfileOf(await ok("verify-token", auth.GET("/api/v1/clients/verify-token")));

  // The gift's recipient: only id and names (design), the names null when unset.
  const found = await ok("client lookup", auth.GET("/api/v1/clients", {
    params: { query: { contact_phone: demo.recipientPhone } },
  }));
  keysAre<"status" | "data">()(found);
  exactly<number>()(found.status);
  keysAre<"client_id" | "first_name" | "last_name">()(found.data);
  const recipientId = exactly<number>()(found.data.client_id);
  exactly<string | null>()(found.data.first_name);
  exactly<string | null>()(found.data.last_name);

  // --- profile ------------------------------------------------------------------------------
  readProfileOf(await ok("update profile", auth.PUT("/api/v1/clients/{client_id}", {
    params: { path: { client_id: me.client_id } },
    body: { first_name: "Sara", last_name: "Ali" },
  })));
  // A refusal in envelope A: the phone cannot change.
  readEnvelopeA(await refused("update profile (phone)", 400, auth.PUT("/api/v1/clients/{client_id}", {
    params: { path: { client_id: me.client_id } },
    body: { contact_phone: "+966599999999" },
  })) as Answer<AppPaths, "/api/v1/clients/{client_id}", "put", 400>);

  readProfileOf(await ok("setting", auth.PUT("/api/v1/clients/setting", {
    body: { client_id: me.client_id, push_enabled: 1 },
  })));

  const device = await ok("add device", auth.POST("/api/v1/clients/add-device-id", {
    body: { device_id: "46AE56EF-29BA-40AE-B436-AF22B119FE1E" },
  }));
  keysAre<"id" | "client_id" | "device_id">()(device);
  exactly<number>()(device.id); // always 920
  exactly<number>()(device.client_id); // always 356315
  exactly<string>()(device.device_id); // spec: "device_id | string", echoed

  // --- address book -------------------------------------------------------------------------
  const created = await ok("create address", auth.POST("/api/v1/clients/address-book", {
    body: { label: "Home", address_line: "King Fahd Road 12", city: "Riyadh", latitude: 24.69, longitude: 46.68 },
  }));
  keysAre<"status" | "data">()(created);
  exactly<number>()(created.status);
  readAddress(exactly<Address>()(created.data));

  const addresses = await ok("list addresses", auth.GET("/api/v1/clients/address-book"));
  keysAre<"status" | "data">()(addresses);
  exactly<number>()(addresses.status);
  addresses.data.forEach((address) => readAddress(exactly<Address>()(address)));

  const addressId = { params: { path: { id: created.data.id } } };
  const one = await ok("get address", auth.GET("/api/v1/clients/address-book/{id}", addressId));
  exactly<number>()(one.status);
  readAddress(one.data);

  const updated = await ok("update address", auth.PUT("/api/v1/clients/address-book/{id}", {
    ...addressId,
    body: { notes: "Ring twice", is_default: true },
  }));
  keysAre<"status" | "data">()(updated);
  exactly<number>()(updated.status);
  readAddress(exactly<Address>()(updated.data));

  const deleted = await ok("delete address", auth.DELETE("/api/v1/clients/address-book/{id}", addressId));
  keysAre<"status" | "data">()(deleted);
  exactly<number>()(deleted.status);
  keysAre<"id">()(deleted.data);
  exactly<string>()(deleted.data.id);

  // --- balance, history, faq ----------------------------------------------------------------
  const balance = await ok("balance", order.GET("/api/v2/client/points"));
  keysAre<"id" | "user_id" | "points" | "pointsExpirationDate">()(balance);
  exactly<string>()(balance.id); // the client id as text
  exactly<string>()(balance.user_id);
  exactly<string>()(balance.points); // decimal text, may be negative
  exactly<string | null>()(balance.pointsExpirationDate); // null, never absent

  const history = await ok("history", order.GET("/api/v2/client/point-history", {
    params: { query: { page: 1, limit: 20 } },
  }));
  keysAre<"data" | "meta">()(history);
  readPageMeta(history.meta);
  for (const entry of history.data) {
    keysAre<"id" | "kind" | "points" | "correlation_id" | "created_at">()(entry);
    exactly<number>()(entry.id);
    exactly<LedgerKind>()(entry.kind);
    exactly<string>()(entry.points); // the signed change, as points text
    exactly<string | null>()(entry.correlation_id); // the order it belongs to, or null
    exactly<string>()(entry.created_at);
  }

  const faq = await ok("faq", order.GET("/api/v2/client/points-faq"));
  for (const item of faq) {
    keysAre<"question_en" | "answer_en" | "question_ar" | "answer_ar">()(item);
    exactly<string>()(item.question_en);
    exactly<string>()(item.answer_en);
    exactly<string>()(item.question_ar);
    exactly<string>()(item.answer_ar);
  }

  // --- offers, occasions --------------------------------------------------------------------
  const offers = await ok("offers", order.GET("/api/v2/client/point-offers"));
  offers.forEach((offer) => readOffer(exactly<Offer>()(offer)));
  const firstOffer = offers[0];
  if (firstOffer === undefined) {
    throw new Error("no point offer to buy");
  }
  const offer = await ok("offer", order.GET("/api/v2/client/point-offers/{id}", {
    params: { path: { id: firstOffer.id } },
  }));
  readOffer(offer);

  const occasions = await ok("occasions", order.GET("/api/v2/client/point-occasions", {
    params: { query: { language: "ar" } },
  }));
  for (const occasion of occasions) {
    keysAre<"id" | "occasion" | "occasion_en" | "is_custom">()(occasion);
    exactly<string>()(occasion.id);
    exactly<string>()(occasion.occasion);
    exactly<string>()(occasion.occasion_en);
    exactly<number>()(occasion.is_custom); // 0 or 1, never a boolean
  }
  const occasionId = occasions.find((occasion) => occasion.is_custom === 0)?.id ?? null;

  // --- orders -------------------------------------------------------------------------------
  const description = await ok("description", order.POST("/api/v2/client/point-orders/description", {
    body: { point_offer_id: offer.id, point_occasion_id: occasionId },
  }));
  keysAre<"description">()(description);
  exactly<string>()(description.description);

  // A body that fails the schema: envelope B with details by field.
  const invalid = await refused("create order (invalid)", 400, order.POST("/api/v2/client/point-orders", {
    body: { point_offer_id: offer.id, to_client_id: 0, payment_type: "checkout" },
  })) as Answer<AppPaths, "/api/v2/client/point-orders", "post", 400>;
  if (typeof invalid === "object" && invalid !== null && "success" in invalid) {
    readEnvelopeB(invalid);
  }

  const placed = await ok("create order", order.POST("/api/v2/client/point-orders", {
    body: {
      point_offer_id: offer.id,
      to_client_id: recipientId,
      payment_type: "checkout",
      point_occasion_id: occasionId,
    },
  }));
  readOrder(exactly<Order>()(placed));
  const orderPath = { params: { path: { correlation_id: placed.correlation_id } } };
  readOrder(await ok("get order", order.GET("/api/v2/client/point-orders/{correlation_id}", orderPath)));

  // --- payments -----------------------------------------------------------------------------
  // The payment service's 4xx comes through with its own status and body (design), unread:
  // `error` is what our payment service sends, optional since the body is passed on as it came.
  type Refusal = { error?: { code: string; message: string } };
  type PassedThrough = Answer<AppPaths, "/api/v2/client/point-orders/{correlation_id}/pay/card", "post", 402 | "4XX">;
  const declined = exactly<Refusal>()(await refused(
    "pay by card (refused card)",
    402,
    order.POST("/api/v2/client/point-orders/{correlation_id}/pay/card", {
      ...orderPath,
      body: { id: demo.refusedCard, cvv: "123" },
    }),
  ) as PassedThrough);
  if (declined.error !== undefined) {
    exactly<string>()(declined.error.code); // `card_declined` from the sandbox
    exactly<string>()(declined.error.message);
  }
  // pay/session passes the same refusals through.
  type _sessionPassesThrough = Check<Exact<
    Answer<AppPaths, "/api/v2/client/point-orders/{correlation_id}/pay/session", "post", 402 | "4XX">,
    Refusal
  >>;
  // A status the point service answers itself may be the payment service's too (a 404).
  type _notFoundEither = Check<Exact<
    Answer<AppPaths, "/api/v2/client/point-orders/{correlation_id}/pay/card", "post", 404>,
    AppComponents["schemas"]["ErrorB"] | Refusal
  >>;

  // The payment service's answer as it came: `redirect_url` is null for a declined card.
  const started = await ok("pay by card", order.POST("/api/v2/client/point-orders/{correlation_id}/pay/card", {
    ...orderPath,
    body: { id: demo.savedCard, cvv: "123" },
  }));
  keysAre<"id" | "status" | "redirect_url">()(started);
  exactly<string>()(started.id);
  exactly<"pending" | "captured" | "declined">()(started.status); // the payment service's statuses
  exactly<string | null>()(started.redirect_url); // null when declined at once

  // `{id, session_token, ...}`: more keys may come, these two always do.
  const session = await ok("pay by session", order.POST(
    "/api/v2/client/point-orders/{correlation_id}/pay/session",
    { ...orderPath, body: { rememberMe: false } },
  ));
  exactly<string>()(session.id);
  exactly<string>()(session.session_token);

  // --- earn rates ---------------------------------------------------------------------------
  const rates = await ok("earn rates", order.GET("/api/v2/client/system_configs/point_rates"));
  for (const rate of rates) {
    keysAre<"amount_from" | "amount_to" | "point_earn">()(rate);
    exactly<number | null>()(rate.amount_from);
    exactly<number | null>()(rate.amount_to); // null on the last row
    exactly<number>()(rate.point_earn);
  }

  // --- gift card ----------------------------------------------------------------------------
  const redeemed = await ok("redeem", order.POST("/api/v2/client/gift-card-code", {
    body: { code: demo.giftCardCode },
  }));
  keysAre<"message" | "code" | "points">()(redeemed);
  exactly<string>()(redeemed.message);
  exactly<string>()(redeemed.code);
  exactly<string>()(redeemed.points);
  // An unknown code: 404 `The code not exist` in envelope C.
  readEnvelopeC(await refused("redeem (unknown)", 404, order.POST("/api/v2/client/gift-card-code", {
    body: { code: demo.unknownGiftCardCode },
  })) as Answer<AppPaths, "/api/v2/client/gift-card-code", "post", 404>);

  // --- services -----------------------------------------------------------------------------
  const home = await ok("home services", order.GET("/api/v2/client/system-categories", {
    params: { query: { language: "en-GB" } },
  }));
  keysAre<"data">()(home);
  home.data.forEach((item) => readServiceItem(exactly<ServiceItem>()(item)));
  const opened = home.data[0];
  if (opened === undefined) {
    throw new Error("no service on the home screen");
  }
  const serviceId = { params: { path: { id: opened.id }, query: { language: "en-GB" } } };
  // The detail: an item's fields and the logo.
  const detail = await ok("service", order.GET("/api/v2/client/system-categories/{id}", serviceId));
  keysAre<keyof ServiceItem | "logo">()(detail);
  readServiceItem(detail);
  exactly<string>()(detail.logo);
  // The spec's choice: children when `data` is non-empty, else the store screen.
  const children = await ok("children", order.GET("/api/v2/client/system-categories/{id}/children", serviceId));
  keysAre<"data">()(children);
  children.data.forEach(readServiceItem);

  // --- stores -------------------------------------------------------------------------------
  const nearest = await ok("nearest store", order.GET("/api/v2/client/banners/merchant/{merchant_id}/nearest-store", {
    params: { path: { merchant_id: demo.bannerNearestBranchMerchantId }, query: { latitude: 24.7, longitude: 46.68 } },
  }));
  keysAre<"store_id">()(nearest);
  const storeId = exactly<number | null>()(nearest.store_id); // null: a no-op tap
  if (storeId !== null) {
    const store = await ok("store", order.GET("/api/v2/client/stores/{id}", { params: { path: { id: storeId } } }));
    readStore(store);
    const branches = await ok("branches", order.GET("/api/v2/client/stores", {
      params: { query: { merchantId: store.merchant_id } },
    }));
    keysAre<"data">()(branches);
    branches.data.forEach((branch) => readStore(exactly<Store>()(branch)));
  }
}

/** Reads a profile answer, which must be exactly verify-token's (spec: the 13-field profile). */
function readProfileOf<Actual>(profile: Actual, ..._: Equals<Actual, Profile> extends true ? [] : [never]): Profile {
  const read = profile as unknown as Profile;
  readProfile(read);
  return read;
}

// ---------------------------------------------------------------------------------------------
// The admin panel's journey
// ---------------------------------------------------------------------------------------------

async function admin(urls: Urls, tokens: Tokens): Promise<void> {
  const operator = createClient<AdminPaths>({ baseUrl: urls.operator });
  operator.use(bearer(() => tokens.operator));

  // --- services -----------------------------------------------------------------------------
  const listed = await ok("list services", operator.GET("/api/v1/operator/services", {
    params: { query: { hierarchy_role: ["parent"], page: 1, limit: 10 } },
  }));
  keysAre<"data" | "meta">()(listed);
  listed.data.forEach((row) => readServiceRow(exactly<ServiceRow>()(row)));
  readAdminPageMeta(listed.meta);

  const all = await ok("all services", operator.GET("/api/v1/operator/services/all/without-pagination", {
    params: { query: { hierarchy_role: ["child"] } },
  }));
  all.forEach(readBareServiceRow);

  const parent = await ok("create service", operator.POST("/api/v1/operator/services", {
    body: { title: "مطاعم", titleTranslated: "Restaurants", hierarchyRole: "parent" },
  }));
  readServiceRow(exactly<ServiceRow>()(parent));
  const child = await ok("create child", operator.POST("/api/v1/operator/services", {
    body: { title: "برجر", titleTranslated: "Burgers", hierarchyRole: "child" },
  }));
  readServiceRow(exactly<ServiceRow>()(child));

  const parentId = { params: { path: { id: parent.id } } };
  readServiceRow(await ok("service", operator.GET("/api/v1/operator/services/{id}", parentId)));
  const renamed = await ok("update service", operator.PATCH("/api/v1/operator/services/{id}", {
    ...parentId,
    body: { titleTranslated: "Restaurants and cafes" },
  }));
  readServiceRow(exactly<ServiceRow>()(renamed));

  // --- children -----------------------------------------------------------------------------
  const candidates = await ok("candidates", operator.GET("/api/v1/operator/services/{id}/children", {
    params: { path: { id: parent.id }, query: { page: 1, limit: 10 } },
  }));
  keysAre<"data" | "meta">()(candidates);
  candidates.data.forEach(readCandidateRow);
  readAdminPageMeta(candidates.meta);

  const assigned = await ok("assign child", operator.PATCH("/api/v1/operator/services/{id}/children", {
    ...parentId,
    body: { assignServiceIds: [child.id] },
  }));
  keysAre<"message" | "statusCode">()(assigned);
  exactly<string>()(assigned.message);
  exactly<number>()(assigned.statusCode);

  // --- audit --------------------------------------------------------------------------------
  const audit = await ok("audit", operator.GET("/api/v1/operator/audit", {
    params: { query: { page: 1, limit: 20 } },
  }));
  keysAre<"data" | "meta">()(audit);
  readAdminPageMeta(audit.meta);
  for (const entry of audit.data) {
    keysAre<"id" | "operatorId" | "role" | "action" | "serviceIds" | "before" | "after" | "createdAt">()(entry);
    exactly<number>()(entry.id);
    exactly<string>()(entry.operatorId); // the token's sub
    exactly<string>()(entry.role);
    exactly<string>()(entry.action);
    exactly<number[]>()(entry.serviceIds);
    exactly<unknown>()(entry.before); // the hierarchy before the write, null on create
    exactly<unknown>()(entry.after);
    exactly<string>()(entry.createdAt);
  }

  // --- offers (the loyalty back office) -------------------------------------------------------
  await offers(operator);

  // --- occasions -----------------------------------------------------------------------------
  const occasion = await ok("create occasion", operator.POST("/api/v1/operator/occasions", {
    body: { occasionEn: "Eid", occasionAr: "عيد", isCustom: false },
  }));
  readOccasionRecord(exactly<OccasionRecord>()(occasion));
  const occasionsListed = await ok("occasions", operator.GET("/api/v1/operator/occasions"));
  keysAre<"data">()(occasionsListed);
  occasionsListed.data.forEach(readOccasionRecord);
  const occasionId = { params: { path: { id: occasion.id } } };
  readOccasionRecord(await ok("update occasion", operator.PATCH("/api/v1/operator/occasions/{id}", {
    ...occasionId,
    body: { occasionAr: null },
  })));
  readOccasionRecord(await ok("withdraw occasion", operator.DELETE("/api/v1/operator/occasions/{id}", occasionId)));

  // --- the expiry policy ----------------------------------------------------------------------
  const policy = await ok("expiry policy", operator.GET("/api/v1/operator/expiry-policy"));
  readExpiryPolicy(policy);
  // A shorter window is made with its dry run's figures, which the panel shows first.
  const dry = await ok("expiry dry run", operator.POST("/api/v1/operator/expiry-policy/dry-run", {
    body: { expiry: "inactivity", inactivityDays: 300, version: policy.version },
  }));
  keysAre<"asOf" | "clients" | "points">()(dry);
  exactly<string>()(dry.asOf);
  exactly<number>()(dry.clients);
  exactly<string>()(dry.points);
  readExpiryPolicy(await ok("replace expiry policy", operator.PUT("/api/v1/operator/expiry-policy", {
    body: {
      expiry: "inactivity",
      inactivityDays: 300,
      version: policy.version,
      confirm: { clients: dry.clients, points: dry.points },
    },
  })));

  // --- client support ------------------------------------------------------------------------
  const clientPoints = await ok("client points", operator.GET("/api/v1/operator/clients/{id}/points", {
    params: { path: { id: 1001 }, query: { page: 1, limit: 5 } },
  }));
  keysAre<"balance" | "history">()(clientPoints);
  keysAre<"id" | "user_id" | "points" | "pointsExpirationDate">()(clientPoints.balance);
  exactly<string>()(clientPoints.balance.points);
  exactly<string | null>()(clientPoints.balance.pointsExpirationDate);
  keysAre<"data" | "meta">()(clientPoints.history);
  for (const entry of clientPoints.history.data) {
    exactly<LedgerKind>()(entry.kind);
    exactly<string>()(entry.points);
  }
  exactly<number>()(clientPoints.history.meta.totalItems);
  // Who looked: the read above is in the reads' own trail, with its operator and client.
  const reads = await ok("client reads", operator.GET("/api/v1/operator/loyalty/client-reads", {
    params: { query: { page: 1, limit: 5 } },
  }));
  keysAre<"data" | "meta">()(reads);
  readAdminPageMeta(reads.meta);
  for (const read of reads.data) {
    keysAre<"id" | "operatorId" | "role" | "clientId" | "readAt">()(read);
    exactly<number>()(read.id);
    exactly<string>()(read.operatorId);
    exactly<OperatorRole>()(read.role);
    exactly<number>()(read.clientId);
    exactly<string>()(read.readAt);
  }
  if (reads.data[0]?.clientId !== 1001) {
    throw new Error(`the read of client 1001 is not in the reads' trail: ${JSON.stringify(reads)}`);
  }
  const adjusted = await ok("adjust points", operator.POST("/api/v1/operator/clients/{id}/adjustments", {
    params: { path: { id: 1001 } },
    body: { points: "-5", reason: "mistaken credit", reference: "journey-1" },
  }));
  keysAre<
    "reference" | "clientId" | "points" | "reason" | "operatorId" | "role" | "balanceAfter" | "createdAt"
  >()(adjusted);
  exactly<string>()(adjusted.reference);
  exactly<number>()(adjusted.clientId);
  exactly<string>()(adjusted.points);
  exactly<string>()(adjusted.reason);
  exactly<string>()(adjusted.operatorId);
  exactly<string>()(adjusted.role);
  exactly<string>()(adjusted.balanceAfter);
  exactly<string>()(adjusted.createdAt);

  // --- gift codes and earn rates (kept by the order service) ----------------------------------
  await giftCodes(operator);
  await earnRates(operator);
}

/** A gift-code batch: points exact text, prefix and expiry always there (null for none), its
 * codes counted by state. */
type GiftCodeBatch = Answer<AdminPaths, "/api/v1/operator/gift-code-batches/{id}", "delete", 200>;
function readGiftCodeBatch(batch: GiftCodeBatch): void {
  keysAre<
    "id" | "reference" | "count" | "points" | "prefix" | "expiresAt" | "createdBy" | "createdAt" | "codes"
  >()(batch);
  exactly<number>()(batch.id);
  exactly<string>()(batch.reference);
  exactly<number>()(batch.count);
  exactly<string>()(batch.points);
  exactly<string | null>()(batch.prefix);
  exactly<string | null>()(batch.expiresAt);
  exactly<string>()(batch.createdBy);
  exactly<string>()(batch.createdAt);
  keysAre<"unused" | "beingCredited" | "credited" | "withdrawn" | "expired">()(batch.codes);
  exactly<number>()(batch.codes.unused);
  exactly<number>()(batch.codes.beingCredited);
  exactly<number>()(batch.codes.credited);
  exactly<number>()(batch.codes.withdrawn);
  exactly<number>()(batch.codes.expired);
}

async function giftCodes(operator: ReturnType<typeof createClient<AdminPaths>>): Promise<void> {
  const issued = await ok("issue gift codes", operator.POST("/api/v1/operator/gift-code-batches", {
    body: { reference: "journey-print", count: 2, points: "25.5", prefix: "EID", expiresAt: null },
  }));
  readGiftCodeBatch(exactly<GiftCodeBatch>()(issued));
  const batches = await ok("gift-code batches", operator.GET("/api/v1/operator/gift-code-batches"));
  keysAre<"data" | "meta">()(batches);
  readAdminPageMeta(batches.meta);
  batches.data.forEach(readGiftCodeBatch);
  const batchId = { params: { path: { id: issued.id } } };
  const detail = await ok("gift-code batch", operator.GET("/api/v1/operator/gift-code-batches/{id}", batchId));
  keysAre<"batch" | "codes">()(detail);
  readGiftCodeBatch(detail.batch);
  for (const code of detail.codes) {
    keysAre<"code" | "state" | "clientId" | "redeemedAt" | "creditedAt">()(code);
    exactly<string>()(code.code);
    exactly<"unused" | "being_credited" | "credited" | "withdrawn" | "expired">()(code.state);
    exactly<number | null>()(code.clientId);
    exactly<string | null>()(code.redeemedAt);
    exactly<string | null>()(code.creditedAt);
  }
  const csv = await ok("export gift codes", operator.GET("/api/v1/operator/gift-code-batches/{id}/codes.csv", {
    ...batchId,
    parseAs: "text",
  }));
  exactly<string>()(csv);
  readGiftCodeBatch(await ok("withdraw gift codes", operator.DELETE("/api/v1/operator/gift-code-batches/{id}", batchId)));
}

async function earnRates(operator: ReturnType<typeof createClient<AdminPaths>>): Promise<void> {
  const table = await ok("earn rates", operator.GET("/api/v1/operator/earn-rates"));
  readEarnRates(table);
  readEarnRates(await ok("replace earn rates", operator.PUT("/api/v1/operator/earn-rates", {
    body: {
      rates: [{ amount_from: "0", amount_to: "50", point_earn: "5" }, { amount_from: "50", amount_to: null, point_earn: "12.5" }],
      version: table.version,
    },
  })));
  const trail = await ok("catalog audit", operator.GET("/api/v1/operator/loyalty/catalog-audit"));
  keysAre<"data" | "meta">()(trail);
  readAdminPageMeta(trail.meta);
  for (const entry of trail.data) {
    exactly<number>()(entry.id);
    exactly<BackOfficeAction>()(entry.action);
    readTrailRecords(entry);
  }
}

/** The earn-rate table: the app's rows as exact decimal text (null where the spec allows) and its version. */
function readEarnRates(table: Answer<AdminPaths, "/api/v1/operator/earn-rates", "get", 200>): void {
  keysAre<"rates" | "version" | "updatedAt">()(table);
  exactly<number>()(table.version);
  exactly<string | null>()(table.updatedAt);
  for (const rate of table.rates) {
    keysAre<"amount_from" | "amount_to" | "point_earn">()(rate);
    exactly<string | null>()(rate.amount_from);
    exactly<string | null>()(rate.amount_to);
    exactly<string | null>()(rate.point_earn);
  }
}

/** An offer as the back office sees it: exact decimals as text, every key always there. */
type OfferRecord = Answer<AdminPaths, "/api/v1/operator/offers/{id}", "patch", 200>;
function readOfferRecord(offer: OfferRecord): void {
  keysAre<
    | "id" | "pointAmount" | "purchasedPointAmount" | "amount" | "sequence" | "active" | "withdrawn"
    | "createdAt" | "updatedAt"
  >()(offer);
  exactly<string>()(offer.id);
  exactly<string>()(offer.pointAmount);
  exactly<string | null>()(offer.purchasedPointAmount);
  exactly<string>()(offer.amount);
  exactly<number | null>()(offer.sequence);
  exactly<boolean>()(offer.active);
  exactly<boolean>()(offer.withdrawn);
  exactly<string>()(offer.createdAt);
  exactly<string>()(offer.updatedAt);
}

async function offers(operator: ReturnType<typeof createClient<AdminPaths>>): Promise<void> {
  const created = await ok("create offer", operator.POST("/api/v1/operator/offers", {
    body: { pointAmount: "40.5", purchasedPointAmount: "45", amount: "6.25" },
  }));
  readOfferRecord(exactly<OfferRecord>()(created));
  const listed = await ok("offers", operator.GET("/api/v1/operator/offers"));
  keysAre<"data">()(listed);
  listed.data.forEach(readOfferRecord);
  const offerId = { params: { path: { id: created.id } } };
  readOfferRecord(await ok("update offer", operator.PATCH("/api/v1/operator/offers/{id}", {
    ...offerId,
    body: { amount: "7.00", sequence: null },
  })));
  readOfferRecord(await ok("withdraw offer", operator.DELETE("/api/v1/operator/offers/{id}", offerId)));
  // A refusal of the back office is matched by its code, a closed set of the contract: a code
  // it does not list fails to compile.
  const withdrawn: AdminSchemas["BackOfficeError"]["code"] = "OFFER_WITHDRAWN";
  const { error, response } = await operator.PATCH("/api/v1/operator/offers/{id}", {
    ...offerId,
    body: { amount: "8.00" },
  });
  if (response.status !== 409 || error === undefined || !("code" in error) || error.code !== withdrawn) {
    throw new Error(`change a withdrawn offer: HTTP ${response.status} ${JSON.stringify(error)}`);
  }
  const trail = await ok("loyalty audit", operator.GET("/api/v1/operator/loyalty/audit"));
  keysAre<"data" | "meta">()(trail);
  readAdminPageMeta(trail.meta);
  for (const entry of trail.data) {
    keysAre<"id" | "operatorId" | "role" | "action" | "subject" | "before" | "after" | "createdAt">()(entry);
    exactly<number>()(entry.id);
    exactly<string>()(entry.operatorId);
    exactly<OperatorRole>()(entry.role);
    exactly<BackOfficeAction>()(entry.action);
    exactly<string>()(entry.subject);
    readTrailRecords(entry);
    exactly<string>()(entry.createdAt);
  }
}

/** A trail entry's `before` and `after`, read as the record its `action` names (null before
 *  a creation or a read); an action no case reads fails to compile. */
function readTrailRecords(entry: AdminSchemas["BackOfficeAuditEntry"]): void {
  switch (entry.action) {
    case "offer.create":
    case "offer.update":
    case "offer.withdraw":
      if (entry.before !== null) readOfferRecord(entry.before);
      readOfferRecord(entry.after);
      break;
    case "occasion.create":
    case "occasion.update":
    case "occasion.withdraw":
      if (entry.before !== null) readOccasionRecord(entry.before);
      readOccasionRecord(entry.after);
      break;
    case "expiry_policy.replace":
      if (entry.before !== null) readExpiryPolicy(entry.before);
      readExpiryPolicy(entry.after);
      break;
    case "adjustment.credit":
    case "adjustment.debit":
      keysAre<"balance">()(entry.before);
      exactly<string>()(entry.before.balance);
      exactly<AdminSchemas["AdjustmentRecord"]>()(entry.after);
      break;
    case "gift-code-batch.issue":
    case "gift-code-batch.read":
    case "gift-code-batch.export":
    case "gift-code-batch.withdraw":
      if (entry.before !== null) readGiftCodeBatch(entry.before);
      readGiftCodeBatch(entry.after);
      break;
    case "earn-rates.replace":
      if (entry.before !== null) readEarnRates(entry.before);
      readEarnRates(entry.after);
      break;
    default:
      exactly<never>()(entry);
  }
}

/** An occasion as the back office sees it: both labels, isCustom a boolean. */
type OccasionRecord = Answer<AdminPaths, "/api/v1/operator/occasions/{id}", "patch", 200>;
function readOccasionRecord(occasion: OccasionRecord): void {
  keysAre<"id" | "occasionEn" | "occasionAr" | "isCustom" | "active" | "createdAt" | "updatedAt">()(occasion);
  exactly<string>()(occasion.id);
  exactly<string>()(occasion.occasionEn);
  exactly<string | null>()(occasion.occasionAr);
  exactly<boolean>()(occasion.isCustom);
  exactly<boolean>()(occasion.active);
  exactly<string>()(occasion.createdAt);
  exactly<string>()(occasion.updatedAt);
}

/** The expiry policy: `expiry` a closed set, days and updatedAt always there (null when unset). */
function readExpiryPolicy(policy: Answer<AdminPaths, "/api/v1/operator/expiry-policy", "get", 200>): void {
  keysAre<"expiry" | "inactivityDays" | "version" | "updatedAt">()(policy);
  exactly<"never" | "inactivity">()(policy.expiry);
  exactly<number | null>()(policy.inactivityDays);
  exactly<number>()(policy.version);
  exactly<string | null>()(policy.updatedAt);
}

function readAdminPageMeta(meta: Answer<AdminPaths, "/api/v1/operator/services", "get", 200>["meta"]): void {
  keysAre<"totalItems" | "page" | "itemsPerPage" | "totalPages">()(meta);
  exactly<number>()(meta.totalItems);
  exactly<number>()(meta.page);
  exactly<number>()(meta.itemsPerPage);
  exactly<number>()(meta.totalPages);
}
