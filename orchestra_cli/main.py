"""Console entry point."""


def main() -> None:
    from orchestra_cli.app import app

    app()
