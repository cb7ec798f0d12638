from course.cloudwave import receipt


def email_key(state, template):
    """One mail per conversation, template and customer."""
    ### BEGIN SOLUTION
    return f"{template}:{state['customer_id']}"
    ### END SOLUTION


def email(state, world):
    """Send the mail that follows the money node, once."""
    ### BEGIN SOLUTION
    message = receipt(state)
    sent = world.mail.send(**message, email_id=email_key(state, message["template"]))
    return {"email": sent, "log": ["email"]}
    ### END SOLUTION
