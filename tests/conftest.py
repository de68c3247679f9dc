"""Fixtures shared by several test modules."""

from __future__ import annotations

import importlib.util

import pytest


@pytest.fixture
def torch_one_thread():
    """One PyTorch intra-op thread for the test (the tensors of the backend tests are tiny, and several
    threads on a shared CPU spin-wait); a no-op without PyTorch."""
    if importlib.util.find_spec("torch") is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)
