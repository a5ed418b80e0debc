"""botgrpo-template: an example botgrpo plugin (copy it to start your own).

Signals (namespace ``template``, the entry-point name in ``pyproject.toml``):

- ``template.banned_word`` (local): each occurrence of a banned word gets a penalty on its characters.
- ``template.keyword_coverage`` (global): the fraction of the row's required keywords the completion mentions.
"""

__version__ = "0.1.0"
