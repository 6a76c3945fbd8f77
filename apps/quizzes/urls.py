"""Routes of the quizzes endpoints."""

from django.urls import path

from apps.quizzes import api

urlpatterns = [
    path("quizzes/", api.QuizListView.as_view(), name="quiz-list"),
    path("quizzes/<slug:slug>/", api.QuizDetailView.as_view(), name="quiz-detail"),
    path("quizzes/<slug:slug>/attempts/", api.AttemptCreateView.as_view(), name="quiz-attempt-create"),
    path("quiz-attempts/", api.AttemptListView.as_view(), name="quiz-attempt-list"),
    path("quiz-attempts/<int:attempt_id>/", api.AttemptDetailView.as_view(), name="quiz-attempt-detail"),
    path("quiz-attempts/<int:attempt_id>/answers/", api.AnswerCreateView.as_view(), name="quiz-answer-create"),
    path("quiz-attempts/<int:attempt_id>/finish/", api.AttemptFinishView.as_view(), name="quiz-attempt-finish"),
    path("questions/<slug:slug>/answers/", api.QuestionAnswerCreateView.as_view(), name="question-answer-create"),
    path("lessons/<slug:slug>/answers/", api.LessonAnswersView.as_view(), name="lesson-answers"),
]
