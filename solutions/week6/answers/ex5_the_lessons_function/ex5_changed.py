first_changed_step = model_changed_at  # the function the lesson's replay cell imported
