"""Request and response bodies of the account endpoints."""

from rest_framework import serializers

from apps.accounts.email_addresses import EMAIL_MAX_LENGTH
from apps.accounts.models import DEVICE_NAME_MAX_LENGTH, DISPLAY_NAME_MAX_LENGTH
from apps.accounts.profile_serializers import MeOutput
from apps.common.fields import CleanEmailField, SingleLineCharField
from apps.common.schema import body_rules
from apps.srs.progress.serializers import SETTINGS_KEYWORDS

_PASSWORD_MAX_LENGTH = 256


def _password(help_text: str) -> serializers.CharField:
    return SingleLineCharField(
        max_length=_PASSWORD_MAX_LENGTH, trim_whitespace=False, style={"input_type": "password"}, help_text=help_text
    )


def _device_name() -> serializers.CharField:
    return SingleLineCharField(
        max_length=DEVICE_NAME_MAX_LENGTH,
        required=False,
        help_text='What the learner will see this sign-in as in their list of devices, e.g. "Pixel 8" or '
        '"Firefox on Linux"; "Unnamed device" when left out.',
    )


class TokenObtainInput(serializers.Serializer):
    username = SingleLineCharField(max_length=150)
    password = SingleLineCharField(max_length=256, trim_whitespace=False, style={"input_type": "password"})
    device_name = _device_name()


class TokenObtainOutput(serializers.Serializer):
    token = serializers.CharField(
        help_text='This device\'s own token: send as "Authorization: Token <token>". Shown once; only a digest is '
        "stored."
    )
    expiry = serializers.DateTimeField(
        help_text="When it stops working unless used: every use moves it on by TOKEN_TTL_DAYS (30 days)."
    )
    device_id = serializers.UUIDField(help_text="This sign-in in GET /auth/devices/.")


@body_rules(keywords={"timezone": SETTINGS_KEYWORDS["timezone"]})
class RegisterInput(serializers.Serializer):
    # The email becomes the username, whose column holds 150 characters.
    email = CleanEmailField(
        max_length=150,
        help_text="Also the username; compared without regard to case. The part before the @ must be ASCII; the "
        "domain may be internationalized.",
    )
    password = _password("Checked by the password rules: length, similarity to the email, common and all-digit.")
    display_name = SingleLineCharField(
        max_length=DISPLAY_NAME_MAX_LENGTH, help_text="Shown to other learners, e.g. on leaderboards if opted in."
    )
    timezone = SingleLineCharField(
        max_length=64, help_text="A name the tz database holds, e.g. Europe/Paris; other names are a 400."
    )


class RegisterAcceptedOutput(serializers.Serializer):
    detail = serializers.CharField(
        help_text="Check your inbox: the same words whether or not the address has an account."
    )


class RegisterConfirmInput(serializers.Serializer):
    token = SingleLineCharField(max_length=256, help_text="From the link in the sign-up email.")
    device_name = _device_name()


class RegisterOutput(TokenObtainOutput):
    user = MeOutput()


class LoginInput(serializers.Serializer):
    email = SingleLineCharField(max_length=EMAIL_MAX_LENGTH)
    password = _password("The account's password.")
    device_name = _device_name()


class PasswordChangeInput(serializers.Serializer):
    current_password = _password("The password now.")
    new_password = _password("Checked by the password rules.")


class PasswordResetInput(serializers.Serializer):
    email = SingleLineCharField(max_length=EMAIL_MAX_LENGTH)


class PasswordResetAcceptedOutput(serializers.Serializer):
    detail = serializers.CharField()


class PasswordResetConfirmInput(serializers.Serializer):
    uid = SingleLineCharField(max_length=64, help_text="From the reset link.")
    token = SingleLineCharField(max_length=128, help_text="From the reset link.")
    new_password = _password("Checked by the password rules.")
    device_name = _device_name()


class DeviceOutput(serializers.Serializer):
    id = serializers.UUIDField(source="public_id")
    name = serializers.CharField(source="device_name")
    signed_in_at = serializers.DateTimeField(source="created")
    last_used_at = serializers.DateTimeField(
        allow_null=True, help_text="To the hour: use is recorded at most once per TOKEN_REFRESH_SECONDS."
    )
    expires_at = serializers.DateTimeField(source="expiry", help_text="Moves on as the device is used.")
    current = serializers.BooleanField(help_text="The device this request was made with.")


class AccountDeleteInput(serializers.Serializer):
    password = _password("The account's password, to confirm.")
