from .parties.api import *

__version__: str
