"""Failed sign-ins and lockouts move from the cache to this table, so a cache outage keeps them.

Counts held in the cache until now are not carried over: at worst an account gets a fresh set of attempts.
"""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ("accounts", "0002_user_email_lower_unique"),
    ]

    operations = [
        migrations.CreateModel(
            name="LoginLockout",
            fields=[
                ("email_digest", models.CharField(max_length=64, primary_key=True, serialize=False)),
                ("failures", models.PositiveIntegerField(default=0)),
                ("expires_at", models.DateTimeField(db_index=True)),
                ("locked_until", models.DateTimeField(blank=True, null=True)),
            ],
            options={
                "constraints": [
                    models.CheckConstraint(
                        condition=models.Q(
                            ("locked_until__isnull", True),
                            ("locked_until__lte", models.F("expires_at")),
                            _connector="OR",
                        ),
                        name="lockout_within_row_lifetime",
                    )
                ],
            },
        ),
    ]
