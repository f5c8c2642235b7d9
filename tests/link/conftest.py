"""Every test here that starts a host runs on both link transports (tests/support/transports.py)."""

from tests.support.transports import link_transport, parametrize_transports

__all__ = ["link_transport", "pytest_generate_tests"]

pytest_generate_tests = parametrize_transports
