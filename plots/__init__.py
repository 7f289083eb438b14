"""Paper figures: one script per figure, sharing ``style``."""
