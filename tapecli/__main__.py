from tapecli.cli import main

main()
