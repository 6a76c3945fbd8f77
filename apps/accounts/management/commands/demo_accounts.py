"""Create or reset the demo learner and staff accounts and print their credentials."""

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser

from apps.accounts.services import demo_accounts_reset


class Command(BaseCommand):
    help = "Create (or reset) the demo learner and staff user with new passwords; development only."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--force", action="store_true", help="Allow with DEBUG off.")

    def handle(self, *args: Any, **options: Any) -> None:
        if not settings.DEBUG and not options["force"]:
            raise CommandError("Demo accounts are for development: DEBUG is off (use --force to insist).")
        for account in demo_accounts_reset():
            role = "staff (admin)" if account.is_staff else "learner"
            self.stdout.write(
                f"{role:14} email: {account.email:20} username: {account.username:8} "
                f"password: {account.password}  API token: {account.token}"
            )
