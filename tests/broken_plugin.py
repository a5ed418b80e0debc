"""A plugin module that fails to import (used through a real entry point in test_plugins.py)."""

raise ImportError("this plugin is broken on purpose")
