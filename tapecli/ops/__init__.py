"""The op table, one entry per op, split by family. See docs/adding-an-op.md.

``from tapecli import ops`` gives every op's public function (``ops.add``, ``ops.reduce_sum``) and the
table itself (``ops.OPS``); the families register their entries on import.
"""
import sys

from tapecli.ops import core
from tapecli.ops.core import *  # noqa: F403
from tapecli.ops.elementwise import *  # noqa: F403
from tapecli.ops.elementwise_math import *  # noqa: F403
from tapecli.ops.special import *  # noqa: F403
from tapecli.ops.shape import *  # noqa: F403
from tapecli.ops.reductions import *  # noqa: F403
from tapecli.ops.linalg import *  # noqa: F403
from tapecli.ops.scan import *  # noqa: F403
from tapecli.ops.gather import *  # noqa: F403
from tapecli.ops.nn import *  # noqa: F403
from tapecli.ops.matrix import *  # noqa: F403
from tapecli.ops.decompositions import *  # noqa: F403
from tapecli.ops.colorspace import *  # noqa: F403
from tapecli.ops.image import *  # noqa: F403

core._E = sys.modules[__name__]
