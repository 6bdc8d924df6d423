from tapecli.cli import main

if __name__ == "__main__":   # not when a process pool or Dask worker re-imports the main module
    main(cached_modules=False)
