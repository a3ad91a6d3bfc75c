"""greeter: says hello."""


def greet(name: str) -> str:
    return f"Hello, {name}!"
