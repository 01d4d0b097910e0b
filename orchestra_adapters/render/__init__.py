"""Graph rendering: draw a pipeline as SVG or PNG with Graphviz, nodes styled by handler type."""

from orchestra_adapters.render.graph_renderer import RENDER_FORMATS, RenderError, render_format, render_graph

__all__ = ["RENDER_FORMATS", "RenderError", "render_format", "render_graph"]
