"""Reads of the explore app: a course's constellation with the learner's mastery, and scenes with their visits."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db.models import OuterRef, Prefetch, QuerySet, Subquery
from django.shortcuts import get_object_or_404

from apps.content.models import Card, Concept, ConceptLink, Course, ExplorerRegion, ExplorerScene, LinkKind
from apps.content.selectors import scenes_list
from apps.explore.layout import LinkKey, Position
from apps.explore.models import ConstellationLayout, RegionVisit
from apps.srs.models import CardMemory
from apps.srs.reviews.recall import CardRecall, RecallBasis, mastery_of
from apps.srs.settings.memory_models import card_configs_get

# How a link reads from its target's side: "Shuffling enables X" becomes "X is enabled by Shuffling".
INVERSE_LABELS: dict[str, str] = {
    LinkKind.PREREQUISITE: "requires",
    LinkKind.PART_OF: "includes",
    LinkKind.ENABLES: "is enabled by",
    LinkKind.RELATED: "is related to",
    LinkKind.CONTRASTS: "contrasts with",
    LinkKind.PREVENTS: "is prevented by",
}


def link_label(kind: str) -> str:
    return str(LinkKind(kind).label) if kind in LinkKind.values else kind


@dataclass(frozen=True)
class NodeLink:
    direction: str  # "outgoing" or "incoming"
    kind: str
    label: str
    concept: str
    concept_name: str


@dataclass(frozen=True)
class Edge:
    source: str
    target: str
    kind: str
    label: str


@dataclass
class Node:
    concept: Concept
    position: Position
    cards: list[Card]
    links: list[NodeLink] = field(default_factory=list)
    mastery: float = 0.0
    cards_studied: int = 0

    @property
    def cards_total(self) -> int:
        return len(self.cards)

    @property
    def x(self) -> float:
        return self.position[0]

    @property
    def y(self) -> float:
        return self.position[1]

    @property
    def z(self) -> float:
        return self.position[2]


@dataclass(frozen=True)
class Constellation:
    course: Course
    layout: ConstellationLayout
    nodes: list[Node]
    edges: list[Edge]


@dataclass(frozen=True)
class CourseGraph:
    """A course's visible concepts (with their visible cards) and the links between them."""

    course: Course
    concepts: list[Concept]
    links: list[ConceptLink]

    @property
    def slugs(self) -> list[str]:
        return [concept.slug for concept in self.concepts]

    @property
    def link_keys(self) -> list[LinkKey]:
        return [(link.source.slug, link.target.slug, link.kind) for link in self.links]


def course_graph_get(*, course_slug: str) -> CourseGraph:
    """The visible course's concepts and links, in three queries whatever the course's size."""
    course = get_object_or_404(Course.objects.filter(archived=False), slug=course_slug)
    cards = Card.objects.visible().select_related("deck").only("id", "slug", "term", "deck__slug")
    concepts = list(
        Concept.objects.filter(course=course, archived=False)
        .order_by("slug")
        .prefetch_related(Prefetch("cards", queryset=cards.order_by("deck_id", "position", "id")))
    )
    links = list(
        ConceptLink.objects.filter(
            source__course=course, target__course=course, source__archived=False, target__archived=False
        )
        .select_related("source", "target")
        .only("kind", "source__slug", "source__name", "target__slug", "target__name")
        .order_by("source__slug", "target__slug", "kind")
    )
    return CourseGraph(course=course, concepts=concepts, links=links)


def constellation_get(*, graph: CourseGraph, layout: ConstellationLayout, learner: Any, now: datetime) -> Constellation:
    """Every concept of the graph with its links, cards, position in `layout` and the learner's mastery.

    One query more than the graph's, whatever its size: the learner's memories of all its cards.
    """
    nodes = {
        concept.slug: Node(
            concept=concept,
            position=_position(layout.positions.get(concept.slug)),
            cards=list(concept.cards.all()),
        )
        for concept in graph.concepts
    }
    edges = []
    for link in graph.links:
        label = link_label(link.kind)
        edges.append(Edge(source=link.source.slug, target=link.target.slug, kind=link.kind, label=label))
        nodes[link.source.slug].links.append(NodeLink("outgoing", link.kind, label, link.target.slug, link.target.name))
        nodes[link.target.slug].links.append(
            NodeLink("incoming", link.kind, INVERSE_LABELS.get(link.kind, label), link.source.slug, link.source.name)
        )
    _add_mastery(list(nodes.values()), learner=learner, now=now)
    return Constellation(course=graph.course, layout=layout, nodes=list(nodes.values()), edges=edges)


def _position(stored: Any) -> Position:
    if not isinstance(stored, list | tuple) or len(stored) != 3:
        return (0.0, 0.0, 0.0)
    return (float(stored[0]), float(stored[1]), float(stored[2]))


def _add_mastery(nodes: list[Node], *, learner: Any, now: datetime) -> None:
    """Each node's mastery (`mastery_of`): recall now weighed by how lasting each card is, a card never studied 0."""
    card_ids = {card.pk for node in nodes for card in node.cards}
    if not card_ids:
        return
    basis = RecallBasis(configs=card_configs_get(learner=learner), now=now)
    recall: dict[int, CardRecall] = {}
    memories = CardMemory.objects.filter(learner=learner, card_id__in=card_ids).only(
        "card_id", "stage", "step", "stability", "difficulty", "due", "last_review", "reps", "lapses"
    )
    for memory in memories:
        recall[memory.card_id] = basis.of_memory(memory, card_id=memory.card_id)
    for node in nodes:
        studied = [recall[card.pk] for card in node.cards if card.pk in recall]
        node.cards_studied = len(studied)
        # Unrounded, as the statistics' deck mastery is: the two are the same mean of the same figures.
        node.mastery = mastery_of(studied, cards_total=node.cards_total)


def scene_get(*, slug: str, learner: Any) -> ExplorerScene:
    """A visible scene with its visible regions, their cards, and when this learner last visited each.

    The last visit is a subquery on the regions' query, so the scene costs three queries as before.
    """
    last_visit = (
        RegionVisit.objects.filter(learner_id=learner.pk, region=OuterRef("pk"))
        .order_by("-visited_at")
        .values("visited_at")[:1]
    )
    cards = Card.objects.visible().select_related("deck").order_by("deck_id", "position", "id")
    regions: QuerySet[ExplorerRegion] = (
        ExplorerRegion.objects.filter(archived=False)
        .annotate(last_visited_at=Subquery(last_visit))
        .order_by("position")
        .prefetch_related(Prefetch("cards", queryset=cards))
    )
    return get_object_or_404(scenes_list().prefetch_related(Prefetch("regions", queryset=regions)), slug=slug)
