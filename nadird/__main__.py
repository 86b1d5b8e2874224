import sys

from nadird.cli.main import main

sys.exit(main())
