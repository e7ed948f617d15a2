import sys

from conformance._runner import main

sys.exit(main())
