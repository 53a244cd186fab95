"""python -m nvrtc_cache ...: the same as the nvrtc-cache command."""

from nvrtc_cache import main

main()
