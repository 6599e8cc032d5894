//! The 3-D Secure page: plain HTML that loads nothing from the internet. Every value shown
//! was validated when the payment was made (ids, digits, a three-letter currency), so none
//! needs escaping.

use crate::payments::{Payment, Status, Webhook};

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:28rem;margin:3rem auto;padding:0 1rem}\
button{font-size:1rem;padding:.6rem 1.2rem;margin-right:.5rem;border-radius:.4rem;border:1px solid #888;cursor:pointer}\
.approve{background:#1b7f3b;color:#fff}.decline{background:#b3261e;color:#fff}code{background:#eee;padding:0 .2rem}";

fn page(title: &str, content: &str) -> String {
    format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
<title>{title} · payment sandbox</title><style>{STYLE}</style></head>\
<body><h1>{title}</h1>{content}<p><small>Payment sandbox: development and tests only.</small></p></body></html>"
    )
}

/// The challenge page: its two buttons while the payment is pending; once settled, what
/// happened, and the button that sends its webhook again while the point service has not
/// taken it.
pub fn challenge(payment: &Payment) -> String {
    let button = |action: &str, class: &str, label: &str| {
        format!(
            "<form method=\"post\" action=\"/3ds/{id}/{action}\" style=\"display:inline\">\
<button class=\"{class}\" type=\"submit\">{label}</button></form>",
            id = payment.id
        )
    };
    let settled = |done: &str, action: &str, class: &str| match payment.webhook {
        Webhook::Due => format!(
            "<p>This payment was {done}; the point service has not taken its webhook yet.</p>{}",
            button(action, class, "Send the webhook again")
        ),
        Webhook::Delivered => format!("<p>This payment was {done}.</p>"),
        Webhook::Never => format!(
            "<p>This payment was {done}. Its webhook is never sent (a <code>silent</code>, \
<code>lost</code> or late card: the lost webhook).</p>"
        ),
    };
    let state = match payment.status {
        Status::Pending => format!(
            "{}{}",
            button("approve", "approve", "Approve"),
            button("decline", "decline", "Decline")
        ),
        Status::Captured => settled("approved", "approve", "approve"),
        Status::Declined => settled("declined", "decline", "decline"),
    };
    page(
        "3-D Secure check",
        &format!(
            "<p>Pay <strong>{amount}</strong> for order <code>{reference}</code> \
(customer {customer}).</p>{state}",
            amount = payment.amount_text(),
            reference = payment.reference,
            customer = payment.customer_id,
        ),
    )
}

/// What a button did.
pub fn outcome(payment: &Payment, message: &str) -> String {
    page(
        "3-D Secure check",
        &format!(
            "<p>Order <code>{reference}</code>: {message}</p><p><a href=\"/3ds/{id}\">Back to the payment</a></p>",
            reference = payment.reference,
            id = payment.id,
        ),
    )
}

pub fn not_found() -> String {
    page("Unknown payment", "<p>No payment with this id.</p>")
}
