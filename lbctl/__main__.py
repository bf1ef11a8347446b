from lbctl.cli.app import main

main()
