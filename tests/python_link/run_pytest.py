#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""ctest's way into the Python module's pytest tests (tests/python_link/):
runs them with pytest, or says why not and exits 77 (ctest's skip): no
pytest (Debian: python3-pytest), or a sanitizer build (`--skip WHY`: a
Debian python3 cannot load an ASan- or TSan-built library).  The
environment names the module and the library: PYTHONPATH=python,
PINWHEEL_LIBRARY=the build's libpinwheel.so."""
import os
import sys


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--skip":
        print("SKIP: " + sys.argv[2])
        return 77
    try:
        import pytest
    except ImportError:
        print(f"SKIP: pytest is not installed for {sys.executable} "
              "(Debian: apt-get install python3-pytest)")
        return 77
    here = os.path.dirname(os.path.abspath(__file__))
    return pytest.main(["-q", "-p", "no:cacheprovider", here])


if __name__ == "__main__":
    sys.exit(main())
