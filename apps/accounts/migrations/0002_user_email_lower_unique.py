"""Emails are unique whatever their case: a unique index on LOWER(email) over auth_user.

Partial, because accounts made without an email (admin, scripts) all have the empty string.
The SQL is the same on PostgreSQL and SQLite.
"""

from django.db import migrations


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
    ]

    operations = [
        migrations.RunSQL(
            sql="CREATE UNIQUE INDEX accounts_user_email_lower_unique ON auth_user (LOWER(email)) WHERE email <> '';",
            reverse_sql="DROP INDEX accounts_user_email_lower_unique;",
        ),
    ]
