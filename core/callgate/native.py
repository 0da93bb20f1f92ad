"""What a tool family shows a provider-native rendering (issue 32): `NativeFace` (the
provider's own tool entry and how its raw calls map onto canonical tools, declared on a
`callgate.ToolSpec` as ``native=``) and `NativeInputError` (an input the face cannot map).
The renderings that send faces are installed renderings (``callgate_providers``)."""

from ._model.native import NativeFace, NativeInputError

__all__ = ["NativeFace", "NativeInputError"]
