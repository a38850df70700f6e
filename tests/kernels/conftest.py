import pytest


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
