"""botgrpo inside verl.

``import verl`` loads :mod:`botgrpo_verl.plugin` through the ``verl.plugins`` entry point, which registers

- every botgrpo advantage estimator (built-ins and those of installed botgrpo plugins) with verl's
  ``register_adv_est`` as ``botgrpo_<name>`` (:mod:`botgrpo_verl.estimators`), and
- the reward manager ``botgrpo`` (:mod:`botgrpo_verl.reward_manager`): a botgrpo ``RewardMixture`` writing
  dense token rewards, and
- on verl 0.9.1, the wrappers of verl's agent loop (:mod:`botgrpo_verl.agent_loop`) that let those dense
  rewards through verl's default, rule-based reward path.

See docs/verl.md.
"""

__version__ = "0.1.0"

# verl first. ``import verl`` imports this package's plugin (the entry point), which imports the reward manager,
# the agent loop and the estimators; a module of this package imported before verl would import verl halfway
# through its own import, and the plugin would then meet that module half made (a circular import: the dense
# agent loop not installed, the manager refusing "install verl 0.9.1" on verl 0.9.1). So the package imports
# verl before any of its modules runs; where verl is not installed, nothing happens here.
import importlib.util as _util
import sys as _sys

if "verl" not in _sys.modules and _util.find_spec("verl") is not None:
    import verl  # noqa: F401  (loads the plugin, botgrpo_verl.plugin, before the module asked for)
