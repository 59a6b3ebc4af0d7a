"""The SDK's one compiled part, take5._core (take5/core.py says what it is and why).

Everything else is in pyproject.toml. The extension is optional: where no C compiler is found, the
build says so and `pip install ./sdk` installs the SDK without it, and take5.core plays the same
games in pure Python (the reference). Build it in place for a checkout with
`python3 setup.py build_ext --inplace` in this folder (scripts/test.sh does).
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "take5._core",
            ["take5/_core.c"],
            optional=True,
            extra_compile_args=["-O2", "-std=c99"],
        )
    ]
)
