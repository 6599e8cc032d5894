-- The auth service's statement for one internal profile lookup (GET /internal/v1/clients/{id}),
-- which a point order makes twice: the recipient's and the payer's.
\set cid random(200001, 300000)
SELECT clients.client_id, clients.odoo_id, clients.contact_phone, clients.status, clients.email_address, clients.first_name, clients.last_name, clients.sex, clients.birth_date, clients.receive_offers, clients.push_enabled, clients.is_food_truck_user, clients.is_cod_disabled FROM clients WHERE clients.client_id = :cid LIMIT 1;
