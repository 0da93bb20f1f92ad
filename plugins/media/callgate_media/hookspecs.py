"""The hook the media plugin needs from an integrator: an image describer for models
without vision. Added to the host with ``registry.add_hookspecs`` at boot."""

from __future__ import annotations

from callgate import hookspec


@hookspec(firstresult=True)
def callgate_image_describer(session):
    """Return a describer for this session's images, or ``None``.

    A describer has ``async describe(image, path) -> str`` (a plain function
    returning a string also works): ``image`` is the `callgate.results.ImageBlock` with
    the file's exact bytes, ``path`` the workspace-relative name. It is used
    when ``[media] vision = false``; with no describer, ``view_image`` is not
    available in that session. The first implementation that answers wins.
    """
