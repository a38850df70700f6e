import os

import pytest


@pytest.fixture(scope="session", autouse=True)
def _tuning_cache(tmp_path_factory):
    """The kernels' CPU tuning cache in a temporary folder, not the user's ~/.cache (tests tune small shapes)."""
    old = os.environ.get("ICML25_CACHE_DIR")
    os.environ["ICML25_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    yield
    if old is None:
        os.environ.pop("ICML25_CACHE_DIR", None)
    else:
        os.environ["ICML25_CACHE_DIR"] = old


@pytest.fixture(scope="session")
def ext():
    """The compiled extension, built here if `python -m methods.kernels.build` has not run (cached)."""
    import methods.kernels as K
    from methods.kernels.build import build

    if not K.extension_available():
        build()
        K._load()
    assert K.extension_available()
    return K
