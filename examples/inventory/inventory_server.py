"""A small MCP server for the example: a shop's stock, over stdio, written with the official
SDK's ``MCPServer``. Tools: ``stock(item)`` and ``low_stock(threshold)`` (structured results);
a prompt ``restock_plan(budget)``; a resource ``inventory://items`` (the whole table as CSV).

Run by clawnb from ``.claw/config.toml`` (``[mcp_servers.inventory]``), once the folder is
trusted (``%claw trust``): it is a program the repository ships, so it never starts unasked."""

from mcp.server.mcpserver import MCPServer

STOCK = {"apples": 42, "pears": 3, "plums": 7, "figs": 0, "quinces": 12}

server = MCPServer("inventory", version="1.0")


@server.tool()
def stock(item: str) -> dict[str, int | str]:
    """How many of one item are in stock."""
    return {"item": item, "count": STOCK.get(item.lower(), 0)}


@server.tool()
def low_stock(threshold: int = 5) -> dict[str, list[dict[str, int | str]]]:
    """The items with fewer than `threshold` in stock, fewest first."""
    low = sorted((n, item) for item, n in STOCK.items() if n < threshold)
    return {"items": [{"item": item, "count": n} for n, item in low]}


@server.prompt(name="restock_plan", description="Plan a restock within a budget.")
def restock_plan(budget: str) -> str:
    return (
        f"Plan this week's restock with a budget of {budget}. Look up the low items with "
        "the low_stock tool first, then propose quantities."
    )


@server.resource("inventory://items", name="items", mime_type="text/csv")
def items() -> str:
    return "item,count\n" + "\n".join(f"{item},{n}" for item, n in STOCK.items())


if __name__ == "__main__":
    server.run()
