"""SDK calls of one feature each, as mixins of `Client`."""
