"""Every account token of before (one per account, rest_framework.authtoken) becomes a device token with the same key.

Clients signed in before keep working without signing in again: the device token's digest is the
SHA-512 of the old key, as knox hashes any token it is sent. The old table, which held the keys in
plain text, is dropped once they are copied. Its app is no longer installed, so it is read with SQL.
"""

from __future__ import annotations

import hashlib
import uuid
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.db import migrations
from django.utils import timezone

_OLD_TABLE = "authtoken_token"
# The key's first characters, which knox looks tokens up by (knox.settings.CONSTANTS.TOKEN_KEY_LENGTH).
_TOKEN_KEY_LENGTH = 15
DEVICE_NAME = "Signed in before devices were named"


def copy_account_tokens(apps: Any, schema_editor: Any) -> None:
    connection = schema_editor.connection
    if _OLD_TABLE not in connection.introspection.table_names():
        return
    device_token = apps.get_model("accounts", "DeviceToken")
    expiry = timezone.now() + timedelta(days=settings.TOKEN_TTL_DAYS)
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT key, user_id, created FROM {_OLD_TABLE}")
        rows = cursor.fetchall()
    device_token.objects.bulk_create(
        [
            device_token(
                digest=hashlib.sha512(key.encode()).hexdigest(),
                token_key=key[:_TOKEN_KEY_LENGTH],
                user_id=user_id,
                created=created,
                expiry=expiry,
                public_id=uuid.uuid4(),
                device_name=DEVICE_NAME,
            )
            for key, user_id, created in rows
        ],
        ignore_conflicts=True,
    )
    schema_editor.execute(schema_editor.sql_delete_table % {"table": schema_editor.quote_name(_OLD_TABLE)})


class Migration(migrations.Migration):
    dependencies = [("accounts", "0004_device_tokens_and_account_email")]

    operations = [migrations.RunPython(copy_account_tokens, migrations.RunPython.noop)]
