"""One module per area of the API."""
