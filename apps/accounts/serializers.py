"""Request and response bodies of the account endpoints."""

from rest_framework import serializers


class TokenObtainInput(serializers.Serializer):
    username = serializers.CharField(max_length=150)
    password = serializers.CharField(max_length=256, trim_whitespace=False, style={"input_type": "password"})


class TokenObtainOutput(serializers.Serializer):
    token = serializers.CharField(help_text='Send as "Authorization: Token <token>".')
