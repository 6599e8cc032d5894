-- The point service's statements for one balance read (GET /api/v2/client/points), as its
-- SQL spans show them. (The pool pings a connection only after a second idle, which never
-- happens under this load: db::PING_AFTER_IDLE.)
\set cid random(200001, 300000)
SELECT "point_accounts"."balance" FROM "point_accounts" WHERE ("point_accounts"."client_id" = :cid) LIMIT 1;
SELECT "point_settings"."expiry", "point_settings"."inactivity_days" FROM "point_settings" LIMIT 1;
SELECT max("point_entries"."created_at") FROM "point_entries" WHERE (("point_entries"."client_id" = :cid) AND ("point_entries"."kind" = 'earn')) LIMIT 1;
