import os
import sys

# tests import their helpers as `support`
sys.path.insert(0, os.path.dirname(__file__))
