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
