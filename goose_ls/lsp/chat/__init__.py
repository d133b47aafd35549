"""The chat for editors without a plugin: the current chat, its transcript documents and
prompt sections, and the popups, progress and views that stand in for a plugin's UI."""
