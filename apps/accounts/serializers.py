"""Request and response bodies of the account endpoints."""

from rest_framework import serializers

from apps.accounts.models import DISPLAY_NAME_MAX_LENGTH
from apps.accounts.profile_serializers import MeOutput
from apps.common.fields import CleanEmailField, SingleLineCharField
from apps.common.schema import body_rules
from apps.srs.progress_serializers import SETTINGS_KEYWORDS

_PASSWORD_MAX_LENGTH = 256


def _password(help_text: str) -> serializers.CharField:
    return SingleLineCharField(
        max_length=_PASSWORD_MAX_LENGTH, trim_whitespace=False, style={"input_type": "password"}, help_text=help_text
    )


class TokenObtainInput(serializers.Serializer):
    username = SingleLineCharField(max_length=150)
    password = SingleLineCharField(max_length=256, trim_whitespace=False, style={"input_type": "password"})


class TokenObtainOutput(serializers.Serializer):
    token = serializers.CharField(help_text='Send as "Authorization: Token <token>".')


@body_rules(keywords={"timezone": SETTINGS_KEYWORDS["timezone"]})
class RegisterInput(serializers.Serializer):
    # The email becomes the username, whose column holds 150 characters.
    email = CleanEmailField(max_length=150, help_text="Also the username; compared without regard to case.")
    password = _password("Checked by the password rules: length, similarity to the email, common and all-digit.")
    display_name = SingleLineCharField(
        max_length=DISPLAY_NAME_MAX_LENGTH, help_text="Shown to other learners, e.g. on leaderboards if opted in."
    )
    timezone = SingleLineCharField(
        max_length=64, help_text="A name the tz database holds, e.g. Europe/Paris; other names are a 400."
    )


class RegisterOutput(serializers.Serializer):
    token = serializers.CharField(help_text='Send as "Authorization: Token <token>".')
    user = MeOutput()


class LoginInput(serializers.Serializer):
    email = SingleLineCharField(max_length=254)
    password = _password("The account's password.")


class PasswordChangeInput(serializers.Serializer):
    current_password = _password("The password now.")
    new_password = _password("Checked by the password rules.")


class PasswordResetInput(serializers.Serializer):
    email = SingleLineCharField(max_length=254)


class PasswordResetAcceptedOutput(serializers.Serializer):
    detail = serializers.CharField()


class PasswordResetConfirmInput(serializers.Serializer):
    uid = SingleLineCharField(max_length=64, help_text="From the reset link.")
    token = SingleLineCharField(max_length=128, help_text="From the reset link.")
    new_password = _password("Checked by the password rules.")


class AccountDeleteInput(serializers.Serializer):
    password = _password("The account's password, to confirm.")
