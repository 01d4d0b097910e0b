"""The pipeline graph model and its DOT loading and writing."""

from orchestra_core.graph.dot_loader import load_pipeline, parse_dot
from orchestra_core.graph.dot_writer import to_dot
from orchestra_core.model.graph import FIDELITY_MODES, SHAPE_TO_HANDLER, Edge, Graph, Node

__all__ = ["FIDELITY_MODES", "SHAPE_TO_HANDLER", "Edge", "Graph", "Node", "load_pipeline", "parse_dot", "to_dot"]
