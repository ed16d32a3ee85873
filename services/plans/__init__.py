"""Ad-hoc plans: created, approved, executed.

service.py, models.py
"""
