"""Fixtures shared by the test modules."""

from __future__ import annotations

import socket

import pytest

from pilid.data import files


class _NoSocket(socket.socket):
    def __init__(self, *args, **kwargs):
        raise AssertionError("a test opened a network socket")


@pytest.fixture
def no_network(monkeypatch):
    """``download=True`` is the loaders' default: no test may reach the network, even by a
    path that bypasses ``files._fetch``."""

    def refuse(url, timeout=60.0):
        raise AssertionError(f"test tried to download {url}")

    monkeypatch.setattr(files, "_fetch", refuse)
    monkeypatch.setattr(socket, "socket", _NoSocket)
