"""Repository-wide pytest setup: the tests never call the real Anthropic API, whatever the environment holds.

The notebook kernels nbval starts inherit this process's environment, so removing the key here keeps them key-free.
"""

import os

os.environ.pop("ANTHROPIC_API_KEY", None)
